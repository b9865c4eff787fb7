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


def _sampled_entry(tmp_path, monkeypatch, values: list[float]):
    """A fake shipped file with an inputs sample (``values`` as P_supported), as the only entry."""
    from franq.fit import shipped_inputs

    folder = tmp_path / "data"
    folder.mkdir(exist_ok=True)
    (tmp_path / "generations").mkdir(exist_ok=True)  # what makes tmp_path a datasets/ folder
    (folder / "cal.json").write_text('{"maps": 1}', encoding="utf-8")
    entry = table.Shipped("cal.json", lambda *a: None, "fake", inputs=lambda datasets, n: {
        "p_supported": values[:n], "label": [1.0] * len(values[:n])})
    monkeypatch.setattr(table, "lookup", lambda names: [entry] if names in ([], ["cal.json"]) else [])
    monkeypatch.setattr(table, "data_dir", lambda: folder)
    return shipped_inputs, folder


def test_an_inputs_sample_says_when_the_code_computes_other_inputs(tmp_path, monkeypatch):
    values = [0.9, 0.2, 0.55]
    si, folder = _sampled_entry(tmp_path, monkeypatch, values)
    record = tmp_path / "inputs.json"
    data = si.record(record, datasets=tmp_path, n=2)
    assert data["records"] == 2 and data["files"]["cal.json"]["inputs"]["p_supported"] == [0.9, 0.2]
    assert si.check(record, datasets=tmp_path) == []
    values[1] = 0.2 + 5e-5  # float32 noise: not a change
    assert si.check(record, datasets=tmp_path) == []
    values[1] = 0.25
    problems = si.check(record, datasets=tmp_path)
    assert "p_supported[1] is 0.250000 now, 0.200000 recorded" in problems[0]
    assert "rebuild it (franq fit shipped cal.json --in-place)" in problems[-1]
    values[1] = 0.2
    (folder / "cal.json").write_text('{"maps": 2}', encoding="utf-8")  # refitted without recording again
    assert "the shipped file changed since its sample was recorded" in si.check(record, datasets=tmp_path)[0]
    record.write_text(json.dumps({"records": 2, "files": {}}), encoding="utf-8")
    assert "no sample recorded" in si.check(record, datasets=tmp_path)[0]


def test_an_inputs_sample_counts_claims_and_columns(tmp_path, monkeypatch):
    values = [0.9, 0.2, 0.55]
    si, _ = _sampled_entry(tmp_path, monkeypatch, values)
    record = tmp_path / "inputs.json"
    si.record(record, datasets=tmp_path, n=3)
    values.pop()
    assert "label holds 2 values now, 3 recorded" in si.check(record, datasets=tmp_path)[0]
    data = json.loads(record.read_text())
    data["files"]["other.json"] = {"sha256": "x", "inputs": {}}  # another file's sample, of 3 records
    record.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="holds samples of 3 records per set"):
        si.record(record, datasets=tmp_path, n=2)


def test_a_folders_sha_reads_its_files_but_not_its_prose(tmp_path):
    from franq.fit.shipped_inputs import _sha256

    (tmp_path / "card.json").write_text("{}")
    (tmp_path / "CARD.md").write_text("# v7")
    first = _sha256(tmp_path)
    (tmp_path / "CARD.md").write_text("# v7, reworded")
    assert _sha256(tmp_path) == first
    (tmp_path / "slot-combiner.json").write_text("{}")
    assert _sha256(tmp_path) != first


def test_check_inputs_names_a_file_without_a_sample(tmp_path):
    record = tmp_path / "inputs.json"
    record.write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(main, ["fit", "shipped", "faithfulness-combined.json", "--check-inputs", str(record)])
    assert result.exit_code != 0 and "no inputs sample for faithfulness-combined.json" in result.output
    result = CliRunner().invoke(main, ["fit", "shipped", "--check-inputs", str(record), "--record-inputs",
                                       str(tmp_path / "b.json")])
    assert result.exit_code != 0 and "give one" in result.output


def test_an_in_place_rebuild_says_to_record_the_inputs_sample_again(monkeypatch):
    entry = table.Shipped("cal.json", lambda *a: None, "fake", inputs=lambda datasets, n: {})
    monkeypatch.setattr(table, "lookup", lambda names: [entry])
    monkeypatch.setattr(table, "rebuild", lambda names, **kw: [{"name": "cal.json", "bytes": 10, "seconds": 0.1}])
    result = CliRunner().invoke(main, ["fit", "shipped", "cal.json", "--in-place"])
    assert result.exit_code == 0, result.output
    assert "franq fit shipped cal.json --record-inputs tests/fixtures/shipped-inputs.json" in result.output


@pytest.mark.slow
@pytest.mark.embedded
def test_the_shipped_files_read_the_inputs_they_were_fitted_on():
    """Drift: the fit inputs of the first records of each sampled file's fit sets (the
    observer and probe calibrators' with the embedded model's passes), as the recipes compute
    them now, against those recorded when the files were rebuilt
    (tests/fixtures/shipped-inputs.json; franq/fit/shipped_inputs.py)."""
    from franq.fit import shipped_inputs

    record = ROOT / "tests" / "fixtures" / "shipped-inputs.json"
    assert {s.name for s in shipped_inputs.sampled()} <= set(json.loads(record.read_text())["files"])
    assert shipped_inputs.check(record) == [], "\n".join(shipped_inputs.check(record))
