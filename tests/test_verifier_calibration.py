"""Three-condition calibration end to end: claims scored with the ``verifier``
backend -> ``franq fit calibrator --three-condition`` -> the pipeline applies it and names
P(true | contradicted); a binary backend refuses it. Tiny random models only."""
from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

from calibration.contract import ClaimInputs
from calibration.three_condition import ThreeConditionCalibrator
from conftest import make_franq
from franq.cli import main
from franq.errors import InputError
from tiny_encoders import build_verifier

PASSAGE = ("The Eiffel Tower is a wrought iron lattice tower in Paris, France, built from 1887 to 1889. "
           "Gustave Eiffel was a French engineer. Paris is the capital of France.")
FACTS = [("Where is the Eiffel Tower?", "The Eiffel Tower is in Paris. It is made of gold.", (True, False)),
         ("Who designed the tower?", "Gustave Eiffel designed the tower. He was a French engineer.", (True, True)),
         ("When was the tower built?", "The tower was built in 1950. It is in Berlin.", (False, False))]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    torch.set_num_threads(1)
    d = tmp_path_factory.mktemp("three")
    model = build_verifier(d / "verifier")
    (d / "franq.toml").write_text(f'[faithfulness]\nname = "verifier"\n[faithfulness.verifier]\nmodel = "{model}"\n')
    with open(d / "train.jsonl", "w", encoding="utf-8") as f:
        for r in range(6):
            for i, (q, a, truth) in enumerate(FACTS):
                first, second = a.split(". ", 1)
                claims = [{"text": first + ".", "is_true": truth[0], "is_faithful": truth[0] if r % 2 else None},
                          {"text": second, "is_true": truth[1] if r < 4 else not truth[1]}]
                f.write(json.dumps({"id": f"{r}-{i}", "question": q, "passages": [PASSAGE], "answer": a,
                                    "claims": claims}) + "\n")
    return d, model


@pytest.fixture(scope="module")
def fitted(setup, tiny_lm_path):
    d, _ = setup
    res = CliRunner().invoke(main, ["fit", "calibrator", str(d / "train.jsonl"), "-o", str(d / "c3.json"),
                                    "--three-condition", "--variant", "soft", "--min-per-condition", "2",
                                    "--model", str(tiny_lm_path), "--config", str(d / "franq.toml")])
    assert res.exit_code == 0, res.output
    return d, res


def test_fit_calibrator_three_condition_writes_the_new_format(fitted):
    d, res = fitted
    cal = ThreeConditionCalibrator.from_json(d / "c3.json")
    assert cal.variant == "soft" and cal.fitted_for["faithfulness"].startswith("verifier:tiny-verifier")
    assert {"supported", "contradicted", "not_mentioned"} <= set(cal.counts_)
    assert "contradicted" in res.output and "wrote" in res.output
    scored = [json.loads(line) for line in open(d / "c3.scored.jsonl", encoding="utf-8")]
    assert all(c["p_contradicted"] is not None for r in scored for c in r["claims"])


def test_pipeline_applies_the_three_condition_calibrator(fitted, setup, tiny_lm):
    d, _ = fitted
    _, model = setup
    franq = make_franq(tiny_lm, {"faithfulness": {"name": "verifier", "verifier": {"model": str(model)}},
                                 "calibration": {"calibrator": str(d / "c3.json")}})
    q, a, _ = FACTS[0]
    result = franq.score(q, [PASSAGE], a)
    assert result.calibration == "three-soft"
    cal = ThreeConditionCalibrator.from_json(d / "c3.json")
    for c in result.scored:
        assert c.p_true_if_contradicted_calibrated is not None
        expected = cal.predict(ClaimInputs([c.p_faithful], [c.uq_faith], [c.uq_unfaith],
                                           p_contradicted=[c.p_contradicted], p_not_mentioned=[c.p_not_mentioned]))
        assert c.p_true_calibrated == pytest.approx(float(expected[0]))
        assert c.p_true_calibrated == pytest.approx(
            c.p_faithful * c.p_true_if_supported_calibrated + c.p_contradicted * c.p_true_if_contradicted_calibrated
            + c.p_not_mentioned * c.p_true_if_not_mentioned_calibrated)
        assert c.p_true_if_unfaithful_calibrated is None  # a binary calibrator's part


def test_a_binary_backend_refuses_a_three_condition_calibrator(fitted, tiny_lm):
    d, _ = fitted
    with pytest.raises(InputError, match="three-condition"):
        make_franq(tiny_lm, {"calibration": {"calibrator": str(d / "c3.json"), "on_mismatch": "force"}})


def test_three_condition_fit_needs_claims_scored_by_the_verifier(tmp_path, tiny_lm_path):
    from test_calibrate_cli import _raw_examples

    raw = _raw_examples(tmp_path / "train.jsonl", n_repeat=1)
    res = CliRunner().invoke(main, ["fit", "calibrator", str(raw), "-o", str(tmp_path / "c.json"),
                                    "--three-condition", "--model", str(tiny_lm_path), "--faithfulness", "combined"])
    assert res.exit_code != 0 and "verifier" in res.output and "Traceback" not in res.output


def test_fit_calibrator_flat_contradicted_map_from_the_scored_claims(fitted, tmp_path):
    d, _ = fitted
    res = CliRunner().invoke(main, ["fit", "calibrator", str(d / "c3.scored.jsonl"), "-o", str(tmp_path / "flat.json"),
                                    "--three-condition", "--variant", "soft", "--min-per-condition", "2",
                                    "--flat", "contradicted"])
    assert res.exit_code == 0, res.output
    cal = ThreeConditionCalibrator.from_json(tmp_path / "flat.json")
    assert cal.flat == ("contradicted",) and len(cal.uq_contradicted_.y_thresholds_) == 1
    assert len(ThreeConditionCalibrator.from_json(d / "c3.json").flat) == 0
    res = CliRunner().invoke(main, ["fit", "calibrator", str(d / "c3.scored.jsonl"), "-o", str(tmp_path / "b.json"),
                                    "--flat", "contradicted"])
    assert res.exit_code != 0 and "--three-condition" in res.output and "Traceback" not in res.output


def test_condition_labels_are_the_conditions_a_three_condition_fit_reads(fitted, tmp_path):
    d, _ = fitted
    records = [json.loads(line) for line in open(d / "c3.scored.jsonl", encoding="utf-8")]
    want = {"supported": 0, "contradicted": 0, "not_mentioned": 0}
    for r in records:
        for c in r["claims"]:
            c["condition"] = ("supported" if c.get("is_faithful") else
                              "contradicted" if c.get("is_true") is False else "not_mentioned")
            want[c["condition"]] += c.get("is_true") is not None
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    res = CliRunner().invoke(main, ["fit", "calibrator", str(labelled), "-o", str(tmp_path / "gold.json"),
                                    "--three-condition", "--variant", "condition", "--min-per-condition", "2"])
    assert res.exit_code == 0, res.output
    counts = ThreeConditionCalibrator.from_json(tmp_path / "gold.json").counts_
    assert {k: counts[k]["n"] for k in want} == want and want["contradicted"] > 0
    assert counts["contradicted"]["true"] == 0  # every claim labelled contradicted here is false
    from franq.fit.training_claims import read_scored, training_claims

    data = training_claims(read_scored(labelled))  # a condition label gives is_faithful where it is missing
    assert data.conditions() == list(data.condition)
    assert data.is_faithful == tuple(c == "supported" for c in data.condition)
    records[0]["claims"][0]["condition"] = "refuted"
    labelled.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    res = CliRunner().invoke(main, ["fit", "calibrator", str(labelled), "-o", str(tmp_path / "bad.json"),
                                    "--three-condition"])
    assert res.exit_code != 0 and "condition" in res.output and "Traceback" not in res.output
