"""Short form in observer mode scores the given answer with terms that depend on
it; answers franq generated stay in-policy (the paper's scorers)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import make_franq
from franq.io import Example
from franq.lm.sampling import Sample, SampleSet
from franq.scorers.answer_consistency import AnswerConsistencyScorer
from franq.scorers.answer_mass import answer_mass
from franq.scorers.answer_share import AnswerShareScorer
from franq.scorers.diversity import SampleContext
from franq.scorers.semantic_entropy_norm import normalized_entropy
from franq.types import Passage

QUESTION = "Where is the Eiffel Tower?"
PASSAGES = (Passage("The Eiffel Tower is in Paris, France."),)
SAMPLES = [("Paris", -1.0, 2), ("It is in Paris.", -6.0, 6), ("Lyon", -2.0, 2), ("Paris", -1.0, 2)]


def _set():
    return SampleSet(tuple(Sample(t, tuple(range(n)), (), lp, "eos") for t, lp, n in SAMPLES), 10)


def _observer(tiny_lm, **uq):
    return make_franq(tiny_lm, {"mode": "short", "uq": {"n_samples": 4, "max_sample_tokens": 6, **uq}})


def test_two_answers_to_one_question_get_different_sample_terms(tiny_lm):
    franq = _observer(tiny_lm)
    right, wrong = franq.score_many([Example(QUESTION, PASSAGES, "Paris"), Example(QUESTION, PASSAGES, "Lyon")],
                                    sample_sets=[_set(), _set()])
    assert right.stack["mode"] == wrong.stack["mode"] == "observer" and right.mode == "short"
    r, w = right.claims[0].signals, wrong.claims[0].signals
    assert (r["p_answer_share"], w["p_answer_share"]) == (0.75, 0.25)
    assert r["p_answer_mass"] > w["p_answer_mass"] and r["p_answer_consistency"] > w["p_answer_consistency"]
    assert r["u_semantic_entropy_norm"] == w["u_semantic_entropy_norm"]  # the samples alone: the same
    assert right.claims[0].uq_faith == 0.75 and right.claims[0].uq_unfaith == r["p_answer_consistency"]


def test_generated_answers_are_scored_in_policy_and_the_setting_overrides(tiny_lm):
    ex = [Example(QUESTION, PASSAGES, "Paris")]
    assert _observer(tiny_lm).score_many(ex, sample_sets=[_set()], generated=True)[0].stack["mode"] == "short"
    assert _observer(tiny_lm).answer(QUESTION, ["The Eiffel Tower is in Paris."], mode="short").stack["mode"] == "short"
    forced = _observer(tiny_lm, short_scoring="in_policy").score_many(ex, sample_sets=[_set()])[0]
    assert forced.stack["mode"] == "short" and "u_semantic_entropy" in forced.claims[0].signals
    observer = _observer(tiny_lm, short_scoring="observer").score_many(ex, sample_sets=[_set()], generated=True)[0]
    assert observer.stack["mode"] == "observer"


def test_answer_mass_uses_length_normalized_class_likelihoods():
    texts = ("Paris", "It is in Paris, the capital", "Lyon")
    equivalent = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=float)
    s = SampleContext(texts, np.array([-4.0, -9.0, -3.0]), equivalent, np.array([4, 9, 1]),
                      np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]))
    # per token: Paris class log-sum-exp(-1, -1) = log(2/e), Lyon -3: mass 2e^-1 / (2e^-1 + e^-3)
    assert answer_mass(s, per_token=True) == pytest.approx(2 * np.exp(-1) / (2 * np.exp(-1) + np.exp(-3)))
    paris = np.exp(-4) + np.exp(-9)
    assert answer_mass(s, per_token=False) == pytest.approx(paris / (paris + np.exp(-3)))


def test_normalized_entropy_is_bounded_by_log_of_the_classes_whatever_the_length():
    eye = np.eye(3)
    short = SampleContext(("a", "b", "c"), np.array([-1.0, -1.0, -1.0]), eye, np.array([1, 1, 1]))
    long = SampleContext(("a", "b", "c"), np.array([-50.0, -50.0, -50.0]), eye, np.array([50, 50, 50]))
    assert normalized_entropy(short) == pytest.approx(np.log(3)) == pytest.approx(normalized_entropy(long))
    one = SampleContext(("a", "a"), np.array([-30.0, -30.0]), np.ones((2, 2)), np.array([16, 16]))
    assert normalized_entropy(one) == pytest.approx(0.0)


def test_an_answer_scorer_without_the_answer_evidence_says_what_it_needs():
    s = SampleContext(("Paris",), np.array([-1.0]), np.ones((1, 1)))

    class E:
        samples = s

    with pytest.raises(ValueError, match="needs the 'answer_samples' evidence"):
        AnswerShareScorer().score([E()])
    with pytest.raises(ValueError, match="needs the 'answer_samples' evidence"):
        AnswerConsistencyScorer().score([E()])


def test_answers_scored_after_one_prefill_equal_teacher_forcing(tiny_lm):
    prompt = tiny_lm.encode("Question: where is the tower? Answer:")
    answers = [tiny_lm.encode(" Paris"), tiny_lm.encode(" in Paris, France"), tiny_lm.encode(" Lyon or Nice")]
    after = tiny_lm.continuation_logprobs_after(tiny_lm.prefill(prompt), answers, batch_size=2)
    forced = tiny_lm.continuation_logprobs([(prompt, a) for a in answers])
    for a, b in zip(after, forced):
        np.testing.assert_allclose(a, b, atol=1e-4)


def test_observer_answer_likelihood_is_the_teacher_forced_one(tiny_lm):
    franq = _observer(tiny_lm, observer={"extra": ["answer_likelihood"]})
    [res] = franq.score_many([Example(QUESTION, PASSAGES, "Paris")], sample_sets=[_set()])
    prompt = franq.preset("observer").evidence
    ids, _ = tiny_lm.encode_answer("Paris")
    from franq.lm.prompts import SHORT_INSTRUCTION

    rag = tiny_lm.rag_prompt(QUESTION, PASSAGES, reserve=6, instruction=SHORT_INSTRUCTION)
    [lp] = tiny_lm.continuation_logprobs([(rag.ids, ids)])
    assert prompt.with_answer and res.claims[0].signals["p_answer_token"] == pytest.approx(np.exp(np.mean(lp)), rel=1e-4)


def test_the_shipped_observer_calibrator_is_picked_for_the_default_embedded_stack():
    from franq.calibrate import default_calibrator_path
    from franq.config import FranqConfig
    from franq.evaluation.units import NamedModel
    from franq.faithfulness.combined import CombinedFaithfulness
    from franq.lm.load import EMBEDDED_NAME
    from franq.pipeline import Franq

    franq = Franq(FranqConfig.from_dict({"mode": "short", "calibration": {"calibrator": "none"}}),
                  NamedModel(EMBEDDED_NAME), faithfulness=CombinedFaithfulness(lm_name=EMBEDDED_NAME))
    observer, in_policy = default_calibrator_path(franq.preset("observer").stack), \
        default_calibrator_path(franq.preset("short").stack)
    assert observer.name.startswith("calibrator-short-observer-") and in_policy.name.startswith("calibrator-short-emb")
