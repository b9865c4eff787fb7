"""Security rules for the whole package: nothing loads pickle, checkpoints load with
``weights_only=True``, and API keys never reach outputs or logs."""
from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for d in ("franq", "claims", "calibration", "scripts", "benchmarks") for p in (ROOT / d).rglob("*.py"))
PICKLE_RE = re.compile(r"\b(import\s+(c?pickle|dill|joblib|cloudpickle)\b|from\s+(c?pickle|dill|joblib|cloudpickle)\s+import"
                       r"|pickle\.loads?\(|joblib\.load\(|allow_pickle\s*=\s*True|weights_only\s*=\s*False)")


def _calls(text: str, name: str):
    """Source text of each call ``name(...)`` (balanced parentheses)."""
    for m in re.finditer(re.escape(name) + r"\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield text[m.start():i]


def test_no_source_file_loads_pickle():
    assert SOURCES
    hits = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in SOURCES
            for m in PICKLE_RE.finditer(p.read_text(encoding="utf-8"))]
    assert not hits, hits


def test_every_torch_load_passes_weights_only_true():
    bad = [f"{p.relative_to(ROOT)}: {call}" for p in SOURCES
           for call in _calls(p.read_text(encoding="utf-8"), "torch.load")
           if not re.search(r"weights_only\s*=\s*True", call)]
    assert not bad, bad


def test_model_checkpoints_load_with_weights_only():
    text = (ROOT / "franq" / "lm" / "load.py").read_text(encoding="utf-8")
    loads = list(_calls(text, "AutoModelForCausalLM.from_pretrained"))
    assert loads and all("weights_only=True" in call or "gguf_file" in call for call in loads), loads


def test_api_key_in_environment_never_reaches_outputs_errors_or_logs(tmp_path, tiny_lm_path, monkeypatch, caplog):
    from franq.cli import main

    key = "sk-proj-SECRETSECRET0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    src = tmp_path / "in.jsonl"
    good = {"id": "g", "question": "Where is it?", "passages": ["It is in Paris."], "answer": "In Paris."}
    src.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", key: 1}) + "\n"
                   + json.dumps({**good, "id": "c", "answer": ""}) + "\n")
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"model": {"path": str(tiny_lm_path)}}))
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(main, ["-v", "score", str(src), "-o", str(out), "--config", str(cfg), "--strict"])
    assert res.exit_code == 0, res.output
    errors = (tmp_path / "out.jsonl.errors.jsonl").read_text()
    assert "OPENAI_API_KEY redacted" in errors  # strict: the unknown field is refused, its name masked
    for text in (out.read_text(), errors, res.output, res.stderr, caplog.text):
        assert key not in text
    kept = tmp_path / "kept.jsonl"  # by default the field is kept in meta: masked there and in the notice too
    res = CliRunner().invoke(main, ["-v", "score", str(src), "-o", str(kept), "--config", str(cfg)])
    assert res.exit_code == 0, res.output
    assert "unknown_fields" in kept.read_text()
    for text in (kept.read_text(), res.output, res.stderr, caplog.text):
        assert key not in text
