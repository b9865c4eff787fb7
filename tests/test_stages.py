"""The stages (franq/stages/): one AnswerRecord per answer carries the passages as given to
the backends; a config names components and the pipeline resolves them."""
from __future__ import annotations

import numpy as np
import pytest

from franq.config import FranqConfig
from franq.errors import InputError
from franq.faithfulness.base import passages_context, text_pairs
from franq.io import Example
from franq.types import Passage

QUESTION = "When was the Eiffel Tower built?"
PASSAGES = (Passage("The Eiffel Tower was built from 1887 to 1889.", "Eiffel Tower"), Passage("Paris is in France."))
ANSWER = "The Eiffel Tower was built from 1887 to 1889. It is in Paris."


class SpyFaithfulness:
    """Records what the pipeline hands a backend."""

    name = "spy"
    needs = frozenset()

    def __init__(self):
        self.pairs, self.evidence = [], []

    def predict(self, pairs, evidence=None):
        self.pairs, self.evidence = list(pairs), list(evidence)
        return np.full(len(pairs), 0.5)


def test_backends_get_the_passage_objects_as_given_and_pairs_from_the_one_join(tiny_lm, make_franq):
    spy = SpyFaithfulness()
    result = make_franq(tiny_lm, faithfulness=spy).score_many([Example(QUESTION, PASSAGES, ANSWER)])[0]
    assert len(spy.evidence) == len(result.scored) > 0
    for e in spy.evidence:
        assert all(a is b for a, b in zip(e.passages, PASSAGES, strict=True))  # the same objects, not copies
        assert e.statement == e.claim.text and e.rag_logprobs is e.record.rag_logprobs
    assert spy.pairs == text_pairs(spy.evidence) == [(passages_context(PASSAGES), e.claim.text) for e in spy.evidence]


def test_short_form_statement_is_question_and_answer(tiny_lm, make_franq):
    spy = SpyFaithfulness()
    make_franq(tiny_lm, {"mode": "short", "uq": {"n_samples": 2, "max_sample_tokens": 4}},
               faithfulness=spy).score(QUESTION, PASSAGES, " Paris ")
    [e] = spy.evidence
    assert e.statement == f"{QUESTION} Paris" and e.passages == PASSAGES


def test_a_config_names_components_and_the_pipeline_resolves_them(tiny_lm, make_franq):
    config = FranqConfig.from_dict({"faithfulness": {"name": "no_such_backend"}})  # a schema: nothing resolved
    assert config.faithfulness.name == "no_such_backend"
    with pytest.raises(InputError, match="'faithfulness.name': unknown faithfulness backend 'no_such_backend'"):
        make_franq(tiny_lm, {"faithfulness": {"name": "no_such_backend"}})


def test_the_pipeline_holds_the_prompt_style_and_leaves_the_model_alone(tiny_lm, make_franq):
    paper = make_franq(tiny_lm, {"prompts": {"answer": "paper"}})
    franq = make_franq(tiny_lm)
    assert (paper.prompt_style, franq.prompt_style) == ("paper", "franq")
    assert paper.preset("long").evidence.style == "paper" and franq.preset("long").evidence.style == "franq"
    assert not hasattr(tiny_lm, "prompt_style")
