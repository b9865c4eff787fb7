"""``franq bench report``: where it writes, and that it reproduces the committed results
from the committed generations (no model run)."""
import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from franq.cli.bench import bench as bench_command
from franq.evaluation import benchmark as bench

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = bench.Layout(ROOT)


def run_bench(argv):
    return CliRunner().invoke(bench_command, [*argv, "--root", str(ROOT)], catch_exceptions=False)


@pytest.mark.parametrize("argv, message", [
    (["report", "--out", str(ROOT / "benchmarks" / "results")], "--update-committed"),
    (["report", "--out", str(ROOT / "benchmarks" / "results" / "sub")], "--update-committed"),
    (["report", "--update-committed", "--out", "/tmp/x"], "leave out --out"),
    (["all", "--quick", "--update-committed"], "never committed"),
])
def test_report_writes_committed_results_only_when_asked(argv, message):
    result = run_bench(argv)
    assert result.exit_code == 2 and message in result.output


def test_bench_needs_a_checkout_root(tmp_path):
    result = CliRunner().invoke(bench_command, ["report", "--root", str(tmp_path)])
    assert result.exit_code == 2 and "no datasets/ folder" in result.output


def test_default_report_folder_is_not_tracked():
    ignored = (ROOT / ".gitignore").read_text().split()
    assert LAYOUT.report.relative_to(ROOT).parts[:2] == ("benchmarks", "cache") and "/benchmarks/cache/" in ignored


def test_update_replaces_only_the_marked_block():
    doc = f"# T\n\nprose\n{bench.DOC_BEGIN}\nold table\n{bench.DOC_END}\nmore prose\n"
    assert bench.replace_block(doc, "new table\n", "doc") == \
        f"# T\n\nprose\n{bench.DOC_BEGIN}\nnew table\n{bench.DOC_END}\nmore prose\n"
    with pytest.raises(ValueError, match="doc: expected one line"):
        bench.replace_block("no markers\n", "x\n", "doc")
    assert bench.DOC_BEGIN in LAYOUT.doc.read_text() and bench.DOC_END in LAYOUT.doc.read_text()


def _close(got, want):
    if isinstance(want, dict):
        return got.keys() == want.keys() and all(_close(got[k], want[k]) for k in want)
    if isinstance(want, list):
        return len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want))
    if isinstance(want, float) and isinstance(got, float):
        return abs(got - want) <= 1e-9
    return got == want


def test_report_reproduces_every_committed_row_from_the_committed_generations(tmp_path):
    committed_file = ROOT / "benchmarks" / "results" / "paper-tables.json"
    before = committed_file.read_bytes()
    assert run_bench(["report", "--out", str(tmp_path)]).exit_code == 0
    assert committed_file.read_bytes() == before  # written to --out only
    committed, got = json.loads(before), json.loads((tmp_path / "paper-tables.json").read_text())
    assert got["meta"]["data"] == committed["meta"]["data"]
    has_xgboost = importlib.util.find_spec("xgboost") is not None
    for want, sec in zip(committed["sections"], got["sections"], strict=True):
        assert (sec["key"], sec["train"], sec["test"], sec["best_baseline"]) == \
            (want["key"], want["train"], want["test"], want["best_baseline"])
        assert _close(sec["calibrator_fits"], want["calibrator_fits"])
        for w, r in zip(want["results"], sec["results"], strict=True):
            if w["group"] == "XGBoost" and not has_xgboost:
                assert r["name"] == w["name"] and "xgboost not installed" in r["note"]
                continue
            assert _close(r, w), f"{sec['key']}: {w['name']}"
        if has_xgboost:
            assert sec["markdown"] == want["markdown"]
