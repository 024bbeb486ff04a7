"""vllm-bench: the JSON file `vllm bench serve --save-result --save-detailed` writes (one benchmark per file); the
fields read and how the request start times are put on the epoch: docs/dev/architecture/store.md#tasks-imports.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tcobench.schemas.imports import ImportFormat, ParsedFile, ParsedRequest, ParsedRun
from tcobench.tasks.imports.base import Importer, bad, load_json, number, register, utc_ns

__all__ = ["DETAILED", "VllmBenchImporter"]

DETAILED = ("start_times", "ttfts", "itls", "input_lens", "output_lens", "errors")
_DATE = ("%Y%m%d-%H%M%S",)
_SUMMARY = (
    "duration",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "output_throughput",
    "total_token_throughput",
    "mean_ttft_ms",
    "median_ttft_ms",
    "p99_ttft_ms",
    "mean_tpot_ms",
    "median_tpot_ms",
    "p99_tpot_ms",
    "mean_itl_ms",
    "median_itl_ms",
    "p99_itl_ms",
)


def _s_ns(value: Any) -> int | None:
    return round(float(value) * 1e9) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _lists(path: Path, found: dict[str, Any]) -> dict[str, list[Any]] | None:
    """The detailed lists, all of one length; None when the file has none of them (a summary-only file)."""
    present = [f for f in DETAILED if f in found]
    if not present:
        return None
    missing = [f for f in DETAILED if f not in found]
    if missing:
        raise bad(path, missing[0], "missing beside the other detailed lists", "a list of one item per request")
    lists = {f: found[f] for f in DETAILED}
    for field, items in lists.items():
        if not isinstance(items, list):
            raise bad(path, field, f"{type(items).__name__} is not a list", "a list of one item per request")
    lengths = {len(items) for items in lists.values()}
    if len(lengths) > 1:
        raise bad(path, "start_times", f"the detailed lists differ in length ({sorted(lengths)})", "one per request")
    return lists


def _requests(lists: dict[str, list[Any]], latencies: list[Any] | None, first_ns: int) -> list[ParsedRequest]:
    zero = min(float(s) for s in lists["start_times"]) if lists["start_times"] else 0.0
    ends = latencies if latencies is not None and len(latencies) == len(lists["start_times"]) else None
    found = []
    for i, (start, ttft, itl, isl, osl, error) in enumerate(zip(*(lists[f] for f in DETAILED), strict=True)):
        gaps = [g for g in (_s_ns(x) for x in itl or []) if g is not None]
        ok = not error
        ttft_ns = _s_ns(ttft) if ok else None
        e2e = _s_ns(ends[i]) if ends is not None else (ttft_ns + sum(gaps) if ttft_ns is not None else None)
        found.append(
            ParsedRequest(
                start_ns=first_ns + round((float(start) - zero) * 1e9),
                ttft_ns=ttft_ns,
                e2e_ns=e2e,
                itl_ns=gaps if ok else [],
                prompt_tokens=int(isl) if isinstance(isl, int) else None,
                output_tokens=int(osl) if ok and isinstance(osl, int) else None,
                error=str(error) if error else None,
            )
        )
    return found


@register(ImportFormat.vllm_bench)
class VllmBenchImporter(Importer):
    def parse(self, path: Path, data: bytes) -> ParsedFile:
        found = load_json(path, data, self.fmt)
        if not isinstance(found, dict) or "duration" not in found or "completed" not in found:
            raise bad(
                path, "duration, completed", "missing: not a vllm bench serve result", "vllm bench serve --save-result"
            )
        if not found.get("date"):
            raise bad(path, "date", "missing: the file has no timestamp", "%Y%m%d-%H%M%S")
        written = utc_ns(path, "date", found["date"], _DATE)
        duration = number(path, found, "duration") or 0.0
        started = written - round(duration * 1e9)
        lists = _lists(path, found)
        if lists is not None and not lists["start_times"] and lists["ttfts"]:
            lists = None
        latencies = found.get("latencies") if isinstance(found.get("latencies"), list) else None
        requests = _requests(lists, latencies, started) if lists is not None else []
        notes = [] if lists is not None else ["no detailed lists (--save-detailed): the run carries the summary only"]
        rate_text = found.get("request_rate")
        rate = None if rate_text in (None, "inf") else float(rate_text)
        if rate is not None and not math.isfinite(rate):
            rate = None
        completed, failed = int(found.get("completed") or 0), int(found.get("failed") or 0)
        prompts = int(found.get("num_prompts") or completed + failed)
        cap = found.get("max_concurrency")
        given = found.get("client_args")
        args: dict[str, Any] = given if isinstance(given, dict) else {}
        dataset = str(found.get("dataset_name") or args.get("dataset_name") or "unknown")
        isl, osl = args.get("random_input_len"), args.get("random_output_len")
        version = found.get("vllm_version") or found.get("version")
        run = ParsedRun(
            started_ns=started,
            finished_ns=written,
            model=found.get("model_id"),
            api=str(found.get("endpoint_type") or found.get("backend") or "unknown"),
            url=str(args.get("base_url") or ""),
            load_mode="poisson" if rate is not None else "closed",
            concurrency=int(cap) if cap else max(prompts, 1),
            rate_rps=rate,
            requests=len(requests) if requests else completed + failed,
            failed=sum(r.error is not None for r in requests) if requests else failed,
            warmup_requests=int(args.get("num_warmups") or 0),
            max_tokens=int(osl) if isinstance(osl, int) else None,
            ignore_eos=bool(args.get("ignore_eos", False)),
            temperature=args.get("temperature"),
            seed=args.get("seed"),
            workload=f"vllm-bench:{dataset}",
            input_tokens_spec=str(isl) if isl is not None else None,
            output_tokens_spec=str(osl) if osl is not None else None,
            tokenizer=found.get("tokenizer_id"),
            per_request=requests,
            aggregates={f: number(path, found, f) for f in _SUMMARY if f in found},
        )
        return ParsedFile(tool=self.tool, version=str(version) if version else None, runs=[run], notes=notes)
