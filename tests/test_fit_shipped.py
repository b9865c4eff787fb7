"""`franq fit shipped` and `franq fit faithfulness`: every file of franq/data/ has one
rebuild (or is declared data), a fitted map loads in its backend, and a cheap shipped file
rebuilds from the committed data as the shipped bytes or within float rounding."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from franq.cli import main
from franq.fit import shipped as table

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_table_lists_exactly_the_files_of_franq_data():
    files = {p.name for p in (ROOT / "franq" / "data").iterdir()}  # the verifier folder too
    fitted = {s.name for s in table.SHIPPED}
    assert fitted | set(table.NOT_FITTED) == files
    assert not fitted & set(table.NOT_FITTED)
    assert "example.json" in table.NOT_FITTED  # data, not fitted


def test_shipped_names_an_unknown_or_unfitted_file():
    result = CliRunner().invoke(main, ["fit", "shipped", "example.json", "--out", "unused"])
    assert result.exit_code != 0
    assert "not a fitted shipped file" in result.output and "data, not fitted" in result.output


def _labelled(path: Path) -> None:
    rows = []
    for i in range(12):
        passages = [{"title": "Paris", "text": "Paris is the capital of France. It has 2 million people."}]
        claims = [{"text": "Paris is the capital of France.", "is_faithful": True},
                  {"text": f"Berlin hosts {i} zoos and a harbour.", "is_faithful": False},
                  {"text": "Nobody checked this one.", "is_faithful": None}]
        rows.append({"id": f"a{i}", "question": "What is the capital of France?", "passages": passages,
                     "answer": " ".join(c["text"] for c in claims), "claims": claims})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_fit_faithfulness_writes_a_map_the_combined_backend_loads(tmp_path):
    from franq.faithfulness.combined import CombinedFaithfulness

    train = tmp_path / "train.jsonl"
    _labelled(train)
    result = CliRunner().invoke(main, ["fit", "faithfulness", str(train), "-o", str(tmp_path / "maps")])
    assert result.exit_code == 0, result.output
    path = tmp_path / "maps" / "faithfulness-combined.json"
    backend = CombinedFaithfulness(path)
    assert backend.map.fitted_on["n_claims"] == 24  # the unlabelled claims are left out
    p = backend.predict([("Paris. Paris is the capital of France.", "Paris is the capital of France."),
                         ("Paris. Paris is the capital of France.", "Berlin hosts 7 zoos and a harbour.")])
    assert p[0] > p[1]


def test_fit_faithfulness_pmi_needs_scores(tmp_path):
    train = tmp_path / "train.jsonl"
    _labelled(train)
    result = CliRunner().invoke(main, ["fit", "faithfulness", str(train), "-o", str(tmp_path), "--only-pmi"])
    assert result.exit_code != 0 and "--scores" in result.output


def test_shipped_check_rebuilds_the_combined_map_from_committed_data(tmp_path):
    name = "faithfulness-combined.json"
    result = CliRunner().invoke(main, ["fit", "shipped", name, "--check", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith(f"| {name}"))
    # the same numbers; the solver's last digits may differ across BLAS builds
    assert "| identical |" in row or "float rounding only" in row, row
    assert (tmp_path / name).is_file()


def test_the_long_calibrator_and_pmi_map_rebuild_from_the_committed_long_form_snapshot(tmp_path):
    """Both read the snapshot's scored claims back as results (no model): the calibrator for
    the shipped stack on the 574 is_true-labelled claims, the map on the 642 support-labelled."""
    long = "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-combined-v1.json"
    pmi = "faithfulness-context-pmi.json"
    result = CliRunner().invoke(main, ["fit", "shipped", long, pmi, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    rebuilt, shipped = (json.loads(p.read_text()) for p in (tmp_path / long, ROOT / "franq" / "data" / long))
    assert rebuilt["fitted_for"] == shipped["fitted_for"]
    assert "574 labelled claims" in rebuilt["description"]
    assert json.loads((tmp_path / pmi).read_text())["fitted_on"]["n_claims"] == 642


def test_compare_tells_rounding_from_a_real_difference(tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    a.write_text(json.dumps({"x": [0.1 + 0.2], "k": "v"}))
    b.write_text(json.dumps({"x": [0.3], "k": "v"}))
    c.write_text(json.dumps({"x": [0.31], "k": "w", "extra": 1}))
    assert table.compare(a, a) == (True, "identical")
    same, why = table.compare(a, b)
    assert not same and "float rounding only" in why
    same, why = table.compare(a, c)
    assert not same and "/extra: only in shipped" in why and "/k:" in why


@pytest.mark.parametrize("option", [["--list"]])
def test_shipped_list_says_which_rebuilds_run_the_model(option):
    result = CliRunner().invoke(main, ["fit", "shipped", *option])
    assert result.exit_code == 0, result.output
    assert "model passes: none" in result.output and "example.json" in result.output
