"""vLLM as a local process (tasks/engine/vllm.py): its command line, and the one-line errors before it starts.

The real vLLM runs in tests/integration/test_vllm.py; here the subject is what tcobench decides before starting it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import BenchmarkConfig
from tcobench.tasks.engine.vllm import vllm_command, vllm_python


def config(**engine: object) -> BenchmarkConfig:
    body = {"engine": {"kind": "vllm", **engine}, "model": {"name": "m", "shape": "tiny"}}
    return BenchmarkConfig.model_validate_json(json.dumps(body))


def test_command_binds_loopback_and_records_every_setting(tmp_path: Path) -> None:
    cfg = config(vllm={"dtype": "float16", "max_model_len": 1024, "extra_args": ["--enforce-eager"]})
    cmd, settings, _ = vllm_command(cfg, Path("/v/bin/python"), tmp_path, 8123, 4, synthetic=True)
    assert cmd[:3] == ["/v/bin/python", "-m", "vllm.entrypoints.openai.api_server"]
    after = {
        flag: cmd[cmd.index(flag) + 1]
        for flag in (
            "--host",
            "--port",
            "--served-model-name",
            "--load-format",
            "--dtype",
            "--max-model-len",
            "--max-num-seqs",
        )
    }
    assert after == {
        "--host": "127.0.0.1",
        "--port": "8123",
        "--served-model-name": "m",
        "--load-format": "dummy",
        "--dtype": "float16",
        "--max-model-len": "1024",
        "--max-num-seqs": "4",
    }
    assert "--enable-prompt-tokens-details" in cmd and cmd[-1] == "--enforce-eager"
    assert settings["load_format"] == "dummy" and settings["max_model_len"] == 1024
    assert settings["extra_args"] == ["--enforce-eager"]
    real, _, _ = vllm_command(cfg, Path("/p"), tmp_path, 1, 1, synthetic=False)
    assert real[real.index("--load-format") + 1] == "auto"  # a real model folder loads its weights


def test_no_python_with_vllm_names_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TCOBENCH_VLLM_PYTHON", raising=False)
    with pytest.raises(ConfigError, match=r"needs a Python with vLLM: give --vllm-python PATH .*pip install vllm"):
        vllm_python(config())


def test_a_python_without_vllm_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCOBENCH_VLLM_PYTHON", sys.executable)  # tcobench's own Python has no vLLM
    with pytest.raises(ConfigError, match=r"has no vLLM \(import vllm fails\); give --vllm-python"):
        vllm_python(config())


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"engine": {"kind": "vllm"}, "model": {"name": "m"}}, "needs exactly one of model.path"),
        ({"engine": {"kind": "vllm", "url": "http://127.0.0.1:1"}, "model": {"shape": "tiny"}}, "no engine.url"),
        ({"model": {"shape": "tiny"}}, "only valid with engine.kind 'vllm'"),
        ({"engine": {"kind": "vllm"}, "model": {"shape": "llama-9b"}}, "unknown shape 'llama-9b'"),
    ],
)
def test_config_errors(body: dict[str, object], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        BenchmarkConfig.model_validate_json(json.dumps(body))
