"""The verdict rule (franq.verdicts, issue 45.2): ``uncertain`` for a claim the passages do not
mention whose knowledge term carries no usable signal, ``likely_true`` / ``likely_false`` where
franq has evidence either way, each with its reason; made in one place for the pipeline, the
service's per-request threshold and the CSV."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from calibration.contract import ClaimInputs
from calibration.three_condition import ThreeConditionCalibrator
from claims.types import Claim
from franq.types import AnswerScore, ClaimScore, KnowledgeTerm, Stack
from franq.verdicts import claim_verdict, p_all_true, weakest_claim, with_verdicts

STACK = Stack.build(model="m", faithfulness="verifier", uq_faith="claim_prob", uq_unfaith="parametric", mode="long",
                    prompt_version="v")


AT_BASE_RATE = KnowledgeTerm(0.6, base_rate=0.58)


def _claim(p_s=0.1, p_c=0.1, p_n=0.8, p=0.6, k=AT_BASE_RATE, text="A claim.", **extra):
    return ClaimScore(Claim(text, ((0, len(text)),)), "scored", p_faithful=p_s, p_contradicted=p_c,
                      p_not_mentioned=p_n, p_true_raw=1e-9, p_true_calibrated=p, knowledge=k, **extra)


def test_not_mentioned_with_a_knowledge_term_at_its_base_rate_is_uncertain():
    verdict, reason = claim_verdict(_claim(), 0.5, margin=0.05)
    assert verdict == "uncertain"
    assert "not in the passages (P_n 0.80)" in reason and "base rate 0.58" in reason and "no usable signal" in reason


def test_an_interval_that_straddles_the_threshold_is_uncertain_even_far_from_the_base_rate():
    k = KnowledgeTerm(0.75, base_rate=0.5, low=0.45, high=0.95)
    verdict, reason = claim_verdict(_claim(p=0.75, k=k), 0.5, margin=0.05)
    assert verdict == "uncertain" and "[0.45, 0.95] straddles the threshold 0.5" in reason
    narrow = KnowledgeTerm(0.75, base_rate=0.5, low=0.7, high=0.8)
    verdict, reason = claim_verdict(_claim(p=0.75, k=narrow), 0.5, margin=0.05)
    assert verdict == "likely_true" and "against a base rate of 0.50" in reason and "P(true) 0.75 >= 0.5" in reason


def test_a_knowledge_term_with_signal_decides_a_not_mentioned_claim():
    verdict, _ = claim_verdict(_claim(p=0.2, k=KnowledgeTerm(0.2, base_rate=0.6)), 0.5, margin=0.05)
    assert verdict == "likely_false"


def test_passages_that_speak_decide_whatever_the_knowledge_term():
    supported = _claim(p_s=0.9, p_c=0.05, p_n=0.05, p=0.93)
    contradicted = _claim(p_s=0.05, p_c=0.9, p_n=0.05, p=0.02)
    assert claim_verdict(supported, 0.5) == ("likely_true", "supported by the passages (P_s 0.90): P(true) 0.93 >= 0.5")
    assert claim_verdict(contradicted, 0.5)[0] == "likely_false"
    assert "contradicted by the passages (P_c 0.90)" in claim_verdict(contradicted, 0.5)[1]


def test_binary_backends_read_a_low_p_faithful_as_not_supported():
    binary = _claim(p_s=0.2, p_c=None, p_n=None)
    verdict, reason = claim_verdict(binary, 0.5)
    assert verdict == "uncertain" and reason.startswith("not supported by the passages (P_faithful 0.20)")


def test_without_a_knowledge_term_or_calibrator_the_verdict_is_the_threshold_cut():
    uncalibrated = dataclasses.replace(_claim(k=None), p_true_calibrated=None, p_true_raw=0.7)
    verdict, reason = claim_verdict(uncalibrated, 0.5)
    assert verdict == "likely_true" and "uncalibrated" in reason
    assert claim_verdict(_claim(), None) == (None, None)
    assert claim_verdict(ClaimScore(Claim("Intro:", ()), "not_check_worthy"), 0.5) == (None, None)


def test_the_margin_is_a_setting():
    assert claim_verdict(_claim(), 0.5, margin=0.0)[0] == "likely_true"  # 0.60 vs 0.58: signal when margin is 0
    assert claim_verdict(_claim(), 0.5, margin=0.05)[0] == "uncertain"


def test_with_verdicts_sets_verdict_reason_and_basis_on_every_claim():
    result = AnswerScore("q", "A claim. B claim.", (_claim(), _claim(p_s=0.9, p_c=0.05, p_n=0.05, p=0.9)), "long",
                         STACK)
    out = with_verdicts(result, 0.5)
    assert [c.verdict for c in out.claims] == ["uncertain", "likely_true"]
    assert all(c.verdict_basis == "calibrated" and c.verdict_reason for c in out.claims)
    assert [c.verdict for c in with_verdicts(out, None).claims] == [None, None]


def test_answer_score_is_the_product_and_the_weakest_claim_has_its_reason():
    claims = (_claim(p=0.9, text="First."), ClaimScore(Claim("Heading", ()), "not_check_worthy"),
              _claim(p=0.2, p_s=0.05, p_c=0.9, p_n=0.05, text="Second."), _claim(p=0.5, text="Third."))
    result = AnswerScore("q", "...", claims, "long", STACK)
    assert p_all_true(result) == pytest.approx(0.9 * 0.2 * 0.5) == result.p_all_true
    w = weakest_claim(result)
    assert (w.index, w.text, w.p_true) == (2, "Second.", 0.2) and "contradicted by the passages" in w.reason
    empty = AnswerScore("q", "", (ClaimScore(Claim("Hi", ()), "not_check_worthy"),), "long", STACK)
    assert empty.p_all_true is None and empty.weakest_claim is None


def test_calibrators_give_the_knowledge_maps_base_rate_and_intervals():
    """A three-condition calibrator fitted here (with step counts) gives each claim's
    knowledge interval; its not-mentioned map on scores without signal sits at its base rate."""
    rng = np.random.default_rng(0)
    n = 600
    p3 = rng.dirichlet([0.5, 0.5, 0.5], size=n)
    a, b = rng.random(n), rng.random(n)
    cond = p3.argmax(axis=1)
    y = np.where(cond == 0, rng.random(n) < 0.9, np.where(cond == 1, rng.random(n) < 0.1, rng.random(n) < 0.6))
    x = ClaimInputs(p3[:, 0], a, b, p_contradicted=p3[:, 1], p_not_mentioned=p3[:, 2])
    cal = ThreeConditionCalibrator(variant="condition").fit(x, y.astype(float))
    parts = cal.predict_components(x)
    k = parts.knowledge
    assert k is not None and k.base_rate == pytest.approx(0.6, abs=0.08)
    assert np.all(k.low <= parts.p_true_if_not_mentioned) and np.all(parts.p_true_if_not_mentioned <= k.high)


def _fast(p_s, p_c, p_n, p):
    text = "The tower is located in Berlin."
    return ClaimScore(Claim(text, ((0, len(text)),)), "scored", p_faithful=p_s, p_contradicted=p_c,
                      p_not_mentioned=p_n, p_true_raw=p_s, p_true_calibrated=p)


def test_the_verifier_alone_never_calls_an_unsupported_claim_likely_true():
    # the fast mode's map gives an unsupported ExpertQA-like claim its base rate (.82): not evidence for it
    verdict, reason = claim_verdict(_fast(0.07, 0.57, 0.36, 0.82), 0.5)
    assert verdict == "uncertain"
    assert "contradicted by the passages (P_c 0.57)" in reason and "verifier alone" in reason and "0.82" in reason
    assert claim_verdict(_fast(0.05, 0.30, 0.65, 0.82), 0.5)[0] == "uncertain"
    # supported: the passages are evidence; below the threshold: the calibration data is
    assert claim_verdict(_fast(0.90, 0.05, 0.05, 0.99), 0.5)[0] == "likely_true"
    assert claim_verdict(_fast(0.05, 0.30, 0.65, 0.03), 0.5)[0] == "likely_false"
    # a stack with UQ terms keeps its own rule (the knowledge term decides)
    with_uq = dataclasses.replace(_fast(0.07, 0.57, 0.36, 0.82), uq_faith=0.4, uq_unfaith=0.3)
    assert claim_verdict(with_uq, 0.5)[0] == "likely_true"


def test_reasons_never_print_a_probability_inside_0_1_as_a_certainty():
    _, reason = claim_verdict(_claim(p_s=0.9996, p_c=0.0002, p_n=0.0002, p=0.9995, k=None), 0.5)
    assert "P_s >0.99" in reason and "P(true) >0.99 >= 0.5" in reason and "1.00" not in reason
    _, reason = claim_verdict(_claim(p_s=0.0001, p_c=0.9998, p_n=0.0001, p=0.003, k=None), 0.5)
    assert "P_c >0.99" in reason and "P(true) <0.01 < 0.5" in reason and "0.00" not in reason
