"""Records say how they were scored: which short-form scorer pair
ran (the paper's semantic entropy / sum of eigenvalues, or the observer pair for a given
answer), and whether a verdict read calibrated P(true) or the raw mix."""
from __future__ import annotations

import json

from conftest import make_franq
from franq.io import Example
from franq.lm.sampling import Sample, SampleSet
from franq.results import read_results, result_record
from franq.types import Passage

QUESTION = "Where is the Eiffel Tower?"
PASSAGES = (Passage("The Eiffel Tower is in Paris, France."),)


def _set():
    rows = [("Paris", -1.0, 2), ("It is in Paris.", -6.0, 6), ("Lyon", -2.0, 2), ("Paris", -1.0, 2)]
    return SampleSet(tuple(Sample(t, tuple(range(n)), (), lp, "eos") for t, lp, n in rows), 10)


def _franq(tiny_lm, *, threshold=None, **uq):
    cfg = {"mode": "short", "uq": {"n_samples": 4, "max_sample_tokens": 6, **uq}}
    if threshold is not None:
        cfg["calibration"] = {"calibrator": "none", "threshold": threshold}
    return make_franq(tiny_lm, cfg)


def test_a_given_short_answer_says_it_ran_the_observer_pair(tiny_lm):
    [res] = _franq(tiny_lm).score_many([Example(QUESTION, PASSAGES, "Paris")], sample_sets=[_set()])
    assert res.mode == "short" and res.stack["mode"] == "observer"
    [note] = [w for w in res.warnings if w.startswith("short form scored by the observer pair")]
    assert "answer_share" in note and "answer_consistency" in note
    assert "semantic_entropy, eigval" in note and "uq.short_scoring = 'in_policy'" in note


def test_in_policy_setting_runs_the_papers_pair_and_says_nothing_more(tiny_lm):
    [res] = _franq(tiny_lm, short_scoring="in_policy").score_many([Example(QUESTION, PASSAGES, "Paris")],
                                                                   sample_sets=[_set()])
    assert (res.stack["uq_faith"], res.stack["uq_unfaith"], res.stack["mode"]) == ("semantic_entropy", "eigval", "short")
    assert not [w for w in res.warnings if "scored by the" in w]
    c = res.claims[0]
    assert c.uq_faith == c.signals["p_semantic_entropy"] and "u_semantic_entropy" in c.signals


def test_a_verdict_without_a_calibrator_is_marked_uncalibrated_and_survives_a_round_trip(tiny_lm, tmp_path):
    [res] = _franq(tiny_lm, threshold=0.4).score_many([Example(QUESTION, PASSAGES, "Paris")], sample_sets=[_set()])
    c = res.claims[0]
    assert c.verdict in ("likely_true", "likely_false") and c.verdict_basis == "uncalibrated"
    assert c.p_true_calibrated is None
    assert any("verdict_basis 'uncalibrated'" in w for w in res.warnings)
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(result_record("x", res, Example(QUESTION, PASSAGES, "Paris"))) + "\n")
    [back] = read_results(path)
    assert back.claims[0].verdict_basis == "uncalibrated" and back.claims[0].verdict == c.verdict


def test_no_threshold_no_verdict_basis(tiny_lm):
    [res] = _franq(tiny_lm).score_many([Example(QUESTION, PASSAGES, "Paris")], sample_sets=[_set()])
    assert res.claims[0].verdict is None and res.claims[0].verdict_basis is None
    assert not any("calibration.threshold" in w for w in res.warnings)
