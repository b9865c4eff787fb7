"""The benchmark's --quick subset end to end on the embedded model (CI smoke test of every
stage: both observe passes, the cache, every method, tables, JSON and plots)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.embedded
def test_benchmark_quick(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    cmd = [sys.executable, str(ROOT / "scripts" / "benchmark.py"), "all", "--quick", "--cache", str(cache),
           "--out", str(out), "--n-boot", "50", "--fresh"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads((out / "issue7-quick.json").read_text())
    assert [s["key"] for s in result["sections"]] == ["long", "short-clean", "short-corrupted"]
    long = result["sections"][0]
    names = [r["name"] for r in long["results"]]
    assert {"Max Claim Prob.", "P(True)", "Parametric Knowledge", "FRANQ no calibration",
            "FRANQ condition-calibrated"} <= set(names)
    assert long["test"]["units"] > 0
    text = (out / "issue7-quick.md").read_text()
    assert "Long-form QA" in text and "Short-form QA" in text
    # a rerun finds everything in the cache: no model pass, same numbers
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads((out / "issue7-quick.json").read_text())["sections"] == result["sections"]
    assert "new records" not in again.stderr
