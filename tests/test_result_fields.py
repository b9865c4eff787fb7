"""Honest output: raw values are always there and never change; calibrated ones
exist only when a calibrator was applied, and the result names its file. Long and short
form are calibrated alike; a calibrator for another stack is not applied; a collapsed
calibrator is reported when it is fitted and when it is loaded."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from conftest import make_franq
from franq.calibrate import CalibratorMismatchError
from franq.fit.calibrator import fit_franq_calibrator
from franq.fit.training_claims import training_claims
from franq.cli import main
from franq.cli.table import format_table
from franq.io import Example
from franq.results import read_results, result_record
from franq.types import Passage

QUESTION = "When was the Eiffel Tower built?"
PASSAGES = ["The Eiffel Tower was built from 1887 to 1889 in Paris.", "Gustave Eiffel designed it."]
ANSWER = "The Eiffel Tower was built from 1887 to 1889. It is in Paris. Gustave Eiffel designed it."
RAW = ("p_faithful", "uq_faith", "uq_unfaith", "p_true_raw", "signals")
CALIBRATED = ("p_true_calibrated", "p_true_if_supported_calibrated", "p_true_if_contradicted_calibrated",
              "p_true_if_not_mentioned_calibrated", "p_true_if_unfaithful_calibrated", "p_faithful_calibrated")
SHORT = {"mode": "short", "uq": {"n_samples": 3, "max_sample_tokens": 6, "short_scoring": "in_policy"}}


def fit_file(path, stack, *, labels=None, calibrate_faithfulness=False, seed=0):
    """A FranqCalibrator fitted on synthetic claims for ``stack``, saved at ``path``."""
    rng = np.random.default_rng(seed)
    n = 300
    p_f, a, b = rng.random(n), rng.random(n), rng.random(n)
    y = rng.random(n) < p_f * a + (1 - p_f) * b if labels is None else np.full(n, labels)
    gold = (p_f > 0.5) if calibrate_faithfulness else None
    cal = FranqCalibrator(variant="calibrated", fitted_for=dict(stack), calibrate_faithfulness=calibrate_faithfulness)
    cal.fit(ClaimInputs(p_f, a, b), y, is_faithful=gold)
    cal.to_json(path)
    return cal


@pytest.fixture(scope="module")
def uncalibrated(tiny_lm):
    franq = make_franq(tiny_lm)
    return franq, franq.score(QUESTION, PASSAGES, ANSWER)


def _same_raw(a, b):
    assert len(a.claims) == len(b.claims)
    for x, y in zip(a.claims, b.claims):
        for field in RAW:
            assert getattr(x, field) == getattr(y, field), field


def test_without_a_calibrator_only_raw_values_are_set(uncalibrated, tiny_lm):
    _, long = uncalibrated
    short = make_franq(tiny_lm, SHORT).score(QUESTION, PASSAGES, "1889")
    for result in (long, short):
        assert result.calibration == "none" and result.calibrator is None
        assert result.scored
        for c in result.scored:
            assert all(getattr(c, f) is not None for f in RAW) and c.signals
            assert all(getattr(c, f) is None for f in CALIBRATED)
            assert not hasattr(c, "p_true") and not hasattr(c, "components")
        record = result_record("x", result)
        assert record["calibrator"] is None and set(CALIBRATED) <= set(record["claims"][-1])
        assert "Calibration: none (raw values only)" in format_table(result)


def test_user_calibrator_sets_calibrated_values_names_its_file_and_leaves_raw_ones(uncalibrated, tiny_lm,
                                                                                   tmp_path, monkeypatch):
    franq, raw = uncalibrated
    stack = franq.preset("long").stack
    cal = fit_file(tmp_path / "cal.json", stack)
    monkeypatch.chdir(tmp_path)
    result = make_franq(tiny_lm, {"calibration": {"calibrator": "cal.json"}}).score(QUESTION, PASSAGES, ANSWER)
    assert result.calibration == "calibrated"
    info = result.calibrator
    assert info.path == str((tmp_path / "cal.json").resolve()) and info.source == "user"
    assert info.variant == "calibrated" and info.fitted_for == stack == result.stack
    _same_raw(result, raw)
    for c in result.scored:
        out = cal.predict_components(ClaimInputs([c.p_faithful], [c.uq_faith], [c.uq_unfaith]))
        assert c.p_true_calibrated == pytest.approx(out.p_true[0])
        assert c.p_true_if_supported_calibrated == pytest.approx(out.p_true_if_supported[0])
        assert c.p_true_if_unfaithful_calibrated == pytest.approx(out.p_true_if_unfaithful[0])
        assert c.p_faithful_calibrated is None  # this calibrator does not calibrate P_faithful
        # a binary calibrator has no three-condition parts
        assert c.p_true_if_contradicted_calibrated is None and c.p_true_if_not_mentioned_calibrated is None
    assert f"Calibration: calibrated, user file {info.path}" in format_table(result)


def test_calibrator_of_p_faithful_fills_p_faithful_calibrated(uncalibrated, tiny_lm, tmp_path):
    franq, raw = uncalibrated
    cal = fit_file(tmp_path / "cal.json", franq.preset("long").stack, calibrate_faithfulness=True)
    result = make_franq(tiny_lm, {"calibration": {"calibrator": str(tmp_path / "cal.json")}}).score(
        QUESTION, PASSAGES, ANSWER)
    assert result.calibration == "calibrated+faithfulness"
    _same_raw(result, raw)
    for c in result.scored:
        assert c.p_faithful_calibrated == pytest.approx(cal.faithfulness_.predict([c.p_faithful])[0])


def test_calibrator_for_another_stack_is_not_applied_unless_forced(uncalibrated, tiny_lm, tmp_path):
    franq, raw = uncalibrated
    path = tmp_path / "other.json"
    fit_file(path, {**franq.preset("long").stack, "model": "some/other-model"})
    skipped = make_franq(tiny_lm, {"calibration": {"calibrator": str(path)}}).score(QUESTION, PASSAGES, ANSWER)
    assert skipped.calibration == "none" and skipped.calibrator is None
    assert all(getattr(c, f) is None for c in skipped.scored for f in CALIBRATED)
    assert any("NOT applied" in w and "model: fitted for 'some/other-model'" in w for w in skipped.warnings)
    _same_raw(skipped, raw)
    forced = make_franq(tiny_lm, {"calibration": {"calibrator": str(path), "on_mismatch": "force"}}).score(
        QUESTION, PASSAGES, ANSWER)
    assert forced.calibration == "calibrated" and forced.calibrator.fitted_for["model"] == "some/other-model"
    assert all(c.p_true_calibrated is not None for c in forced.scored)
    assert any("applied although it was fitted for another stack" in w for w in forced.warnings)
    with pytest.raises(CalibratorMismatchError, match="fitted for another stack"):
        make_franq(tiny_lm, {"calibration": {"calibrator": str(path), "on_mismatch": "error"}})


def test_collapsed_calibrator_warns_when_fitted_by_franq_calibrate_and_when_loaded(tiny_lm, tmp_path):
    franq = make_franq(tiny_lm)
    answers = [ANSWER, "It was built in 1889.", "The tower is in Paris. It is made of iron."]
    results = franq.score_many([Example(QUESTION, tuple(Passage(p) for p in PASSAGES), a) for a in answers])
    scored = tmp_path / "scored.jsonl"
    with open(scored, "w", encoding="utf-8") as f:
        for k, res in enumerate(results):
            rec = result_record(str(k), res)
            for c in rec["claims"]:
                c["is_true"] = True  # one label only: the calibrated output is a constant
            f.write(json.dumps(rec) + "\n")
    data = training_claims(read_results(scored, with_input=True))
    cal, _ = fit_franq_calibrator(data, variant="calibrated")
    assert any("calibrated P(true) collapses to 1 distinct value" in w for w in cal.warnings_)
    out = tmp_path / "collapsed.json"
    res = CliRunner().invoke(main, ["fit", "calibrator", str(scored), "-o", str(out), "--variant", "calibrated", "--min-per-condition", "1", "--folds", "2"])
    assert res.exit_code == 0, res.output
    assert "warning: on its training claims: calibrated P(true) collapses" in res.output
    loaded = make_franq(tiny_lm, {"calibration": {"calibrator": str(out)}}).score(QUESTION, PASSAGES, ANSWER)
    assert loaded.calibration == "calibrated"  # applied (same stack), and the results say it cannot rank
    collapse = [w for w in loaded.warnings if "on its training claims: calibrated P(true) collapses" in w]
    assert len(collapse) == 1 and str(out) in collapse[0]


def _short_examples():
    ps = tuple(Passage(p) for p in PASSAGES)
    return [Example(QUESTION, ps, a) for a in ("1889", "In 1887", "Paris", "1889.", "Gustave Eiffel", "1950")]


def test_short_form_is_calibrated_like_long_form(tiny_lm, tmp_path):
    franq = make_franq(tiny_lm, SHORT)
    stack = franq.preset("short").stack
    assert (stack["mode"], stack["equivalence"], stack["sampling"]) == ("short", "normalized-v1", "n=3,temperature=1,max_tokens=6,seed=0")
    raw = franq.score_many(_short_examples())
    lines = []
    for k, res in enumerate(raw):
        rec = json.loads(json.dumps(result_record(str(k), res)))  # as `franq score` writes it
        rec["claims"][0]["is_true"] = k % 2 == 0
        lines.append(rec)
    data = training_claims(read_results(lines, with_input=True))
    assert data.stack == stack and set(data.signals) >= {"u_semantic_entropy", "u_eigval"}
    np.testing.assert_allclose(data.uq_faith, [r.claims[0].uq_faith for r in raw])
    cal, _ = fit_franq_calibrator(data, variant="calibrated", min_per_condition=1)
    path = tmp_path / "short-cal.json"
    cal.to_json(path)

    calibrated = make_franq(tiny_lm, {**SHORT, "calibration": {"calibrator": str(path)}}).score_many(_short_examples())
    for res, before in zip(calibrated, raw):
        assert res.mode == "short" and res.calibration == "calibrated"
        assert res.calibrator.fitted_for == stack and res.calibrator.source == "user"
        _same_raw(res, before)
        c = res.claims[0]
        x = ClaimInputs([c.p_faithful], [c.uq_faith], [c.uq_unfaith])
        assert c.p_true_calibrated == pytest.approx(cal.predict(x)[0])

    # the sampling settings are part of the short stack: with 4 samples the file is not applied
    other = make_franq(tiny_lm, {**SHORT, "uq": {**SHORT["uq"], "n_samples": 4},
                                 "calibration": {"calibrator": str(path)}}).score(QUESTION, PASSAGES, "1889")
    assert other.calibration == "none" and other.claims[0].p_true_calibrated is None
    assert any("sampling: fitted for 'n=3," in w and "running 'n=4," in w for w in other.warnings)


def test_auto_mode_calibrates_each_preset_with_its_own_stack_only(uncalibrated, tiny_lm, tmp_path):
    franq, _ = uncalibrated
    path = tmp_path / "long-cal.json"
    fit_file(path, franq.preset("long").stack)
    auto = make_franq(tiny_lm, {**SHORT, "mode": "auto", "calibration": {"calibrator": str(path)}})
    ps = tuple(Passage(p) for p in PASSAGES)
    long, short = auto.score_many([Example(QUESTION, ps, ANSWER), Example(QUESTION, ps, "1889")])
    assert (long.mode, short.mode) == ("long", "short")
    assert long.calibration == "calibrated" and all(c.p_true_calibrated is not None for c in long.scored)
    assert short.calibration == "none" and short.claims[0].p_true_calibrated is None
    assert any("mode: fitted for 'long', running 'short'" in w for w in short.warnings)
    assert not any("NOT applied" in w for w in long.warnings)


def test_result_fields_are_the_documented_ones():
    from franq.types import AnswerScore, ClaimScore

    assert [f.name for f in dataclasses.fields(ClaimScore)] == [
        "claim", "status", "p_faithful", "p_contradicted", "p_not_mentioned", "uq_faith", "uq_unfaith", "p_true_raw",
        *CALIBRATED, "signals", "verdict", "verdict_basis", "verdict_reason", "evidence_window", "knowledge"]
    assert [f.name for f in dataclasses.fields(AnswerScore)] == [
        "question", "answer", "claims", "mode", "stack", "calibrator", "warnings", "decision"]
