"""The benchmark end to end on the embedded model: ``all --quick --fresh`` observes one
answer per split and setting (both model passes, the cache), then reports (tables, JSON,
plots). Slow: ``make test`` runs it after the rest. That every method computes and
reproduces the committed numbers is tests/test_benchmark_report.py (no model)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.embedded
@pytest.mark.slow
def test_benchmark_all_quick_observes_into_the_cache_and_reports_from_it(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    cmd = [sys.executable, "-m", "franq", "bench", "all", "--quick", "--fresh", "--root", str(ROOT), "--cache", str(cache),
           "--out", str(out), "--n-boot", "20"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads((out / "paper-tables-quick.json").read_text())
    assert [s["key"] for s in result["sections"]] == ["long", "short-clean", "short-corrupted"]
    # the report found every record the observe stages wrote (same cache keys)
    assert all(split["not_observed"] == 0 for setting in result["meta"]["data"].values() for split in setting.values())
    assert len((cache / "short-nq-open.embedded-SmolLM2-135M-Instruct.Q4-1.jsonl").read_text().splitlines()) >= 2
    long = result["sections"][0]
    assert long["test"]["true"] > 0 and long["test"]["false"] > 0
    values = {r["name"]: r["values"] for r in long["results"]}
    for name in ("Max Claim Prob.", "P(True)", "Faithfulness (P_faithful)", "Parametric Knowledge",
                 "FRANQ no calibration"):
        assert values[name]["AUROC"] is not None, name
    assert set(long["plots"]) == {"rejection", "reliability"}
    assert all((out / png).stat().st_size > 0 for png in long["plots"].values())
    text = (out / "paper-tables-quick.md").read_text()
    assert "Long-form QA" in text and "Short-form QA" in text
