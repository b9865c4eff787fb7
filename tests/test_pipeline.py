"""The FRANQ pipeline and mix on a tiny model with test-double faithfulness."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from conftest import assert_float32_close
from franq.errors import InputError
from franq.mix import mix

QUESTION = "When was the Eiffel Tower built?"
PASSAGES = ["The Eiffel Tower was built from 1887 to 1889.", {"title": "Paris", "text": "Paris is in France."}]
ANSWER = "# Answer\nThe Eiffel Tower was built from 1887 to 1889 [1]. It is in Paris, France."


def test_mix_endpoints_and_midpoint():
    a, b = np.array([0.9, 0.2]), np.array([0.1, 0.6])
    np.testing.assert_allclose(mix(1.0, a, b), a)
    np.testing.assert_allclose(mix(0.0, a, b), b)
    np.testing.assert_allclose(mix(0.5, a, b), (a + b) / 2)
    with pytest.raises(ValueError, match="p_faithful"):
        mix(1.2, a, b)


@pytest.mark.parametrize("p_f, branch", [(1.0, "uq_faith"), (0.0, "uq_unfaith")])
def test_faithfulness_one_gives_uq_faith_and_zero_gives_uq_unfaith(tiny_lm, make_franq, constant_faithfulness,
                                                                    p_f, branch):
    result = make_franq(tiny_lm, faithfulness=constant_faithfulness(p_f)).score(QUESTION, PASSAGES, ANSWER)
    scored = result.scored
    assert len(scored) == 2
    for c in scored:
        assert c.p_faithful == p_f
        assert c.p_true_raw == pytest.approx(getattr(c, branch), rel=1e-12)
        assert c.uq_faith == pytest.approx(math.exp(c.signals["log_claim_prob"]))
        assert c.uq_unfaith == pytest.approx(math.exp(c.signals["log_parametric"]))
        assert c.p_true_calibrated is None  # calibrator "none": raw values only


def test_claim_scores_are_products_of_the_claims_token_probabilities(tiny_lm, make_franq, constant_faithfulness):
    franq = make_franq(tiny_lm, faithfulness=constant_faithfulness(0.5))
    result = franq.score(QUESTION, PASSAGES, ANSWER)
    ids, _ = tiny_lm.encode_answer(ANSWER)
    from franq.types import Passage

    rag = tiny_lm.rag_prompt(QUESTION, [Passage(PASSAGES[0]), Passage("Paris is in France.", "Paris")])
    closed = tiny_lm.closed_book_prompt(QUESTION)
    with_p, without_p = tiny_lm.continuation_logprobs([(rag.ids, ids), (closed.ids, ids)])
    for c in result.scored:
        pos = list(c.claim.token_positions)
        assert_float32_close(c.signals["log_claim_prob"], with_p[pos].sum())
        assert_float32_close(c.signals["log_parametric"], without_p[pos].sum())
        assert c.signals["n_tokens"] == len(pos)
        assert c.p_true_raw == pytest.approx(0.5 * c.uq_faith + 0.5 * c.uq_unfaith)


def test_heading_is_kept_but_not_scored(tiny_lm, make_franq, constant_faithfulness):
    result = make_franq(tiny_lm, faithfulness=constant_faithfulness(0.5)).score(QUESTION, PASSAGES, ANSWER)
    head = result.claims[0]
    assert head.status == "not_check_worthy" and head.claim.text == "Answer"
    assert head.p_true_raw is None and head.p_true_calibrated is None and head.signals == {}


def test_given_claims_are_located_and_unlocatable_ones_reported(tiny_lm, make_franq, constant_faithfulness):
    franq = make_franq(tiny_lm, faithfulness=constant_faithfulness(0.5))
    result = franq.score(QUESTION, PASSAGES, ANSWER, claims=["The tower is in Paris.", "Quasars emit light."])
    assert [c.status for c in result.claims] == ["scored", "unaligned"]
    assert "no content word" in result.claims[1].claim.note


def test_score_many_equals_one_by_one(tiny_lm, make_franq, constant_faithfulness):
    from franq.io import parse_example

    franq = make_franq(tiny_lm, {"batch": {"max_batch_tokens": 100_000}}, faithfulness=constant_faithfulness(0.3))
    examples = [parse_example({"question": QUESTION, "passages": PASSAGES, "answer": a})
                for a in (ANSWER, "Paris.", "It was built in 1889. It is tall.")]
    together = franq.score_many(examples)
    for ex, got in zip(examples, together):
        alone = franq.score_many([ex])[0]
        for a, b in zip(got.scored, alone.scored):
            assert a.p_true_raw == pytest.approx(b.p_true_raw, rel=1e-3)


def test_answer_reuses_generation_logprobs_and_runs_only_the_closed_book_pass(tiny_lm, make_franq,
                                                                              constant_faithfulness, monkeypatch):
    franq = make_franq(tiny_lm, {"model": {"max_new_tokens": 16}}, faithfulness=constant_faithfulness(1.0))
    calls = []
    real = tiny_lm.continuation_logprobs
    monkeypatch.setattr(tiny_lm, "continuation_logprobs",
                        lambda items, **kw: calls.append(len(items)) or real(items, **kw))
    result = franq.answer(QUESTION, PASSAGES)
    assert calls == [1]  # only the pass without passages
    gen = tiny_lm.generate(tiny_lm.rag_prompt(QUESTION, [*map(_passage, PASSAGES)], reserve=16).ids,
                           max_new_tokens=16)
    assert result.answer == gen.text
    for c in result.scored:
        expected = sum(gen.token_logprobs[t] for t in c.claim.token_positions)
        assert c.signals["log_claim_prob"] == pytest.approx(expected, abs=1e-6)


def _passage(p):
    from franq.types import Passage

    return Passage(p) if isinstance(p, str) else Passage(p["text"], p["title"])


@pytest.mark.parametrize("kwargs, field", [
    ({"question": 3}, "question"),
    ({"passages": "just a string"}, "passages"),
    ({"passages": [{"txt": "x"}]}, "passages[0]"),
    ({"answer": "   "}, "answer"),
    ({"claims": "one claim"}, "claims"),
])
def test_bad_api_input_names_the_field(tiny_lm, make_franq, constant_faithfulness, kwargs, field):
    args = {"question": QUESTION, "passages": PASSAGES, "answer": ANSWER} | kwargs
    with pytest.raises(InputError, match=re.escape(f"'{field}")):
        make_franq(tiny_lm, faithfulness=constant_faithfulness(0.5)).score(**args)
