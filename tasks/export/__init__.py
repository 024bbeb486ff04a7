"""export: the selected runs in other tools' formats (`tcobench export`): llm-d's benchmark_report, Parquet, CSV."""

__all__: list[str] = []
