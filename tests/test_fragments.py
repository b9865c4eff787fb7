"""Claims that are statements only with their question ("1991", "Born in Ulm", "It fell in
1991." with "it" unresolved): the faithfulness backend reads them after the question, in the
long form and the fast mode's split preset, as the short form reads a whole answer."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import make_franq

from claims.fragments import is_fragment, needs_question
from claims.types import Claim

QUESTION = "When did the Berlin Wall fall?"
PASSAGES = ["The Berlin Wall fell on 9 November 1989, after weeks of protests."]


@pytest.mark.parametrize("text", ["1991", "Sydney.", "In 1989.", "8,849 metres", "Frank Herbert", "Paris, France",
                                  "Born in Ulm, Germany", "Use the --check flag.", "Approximately 2 hours"])
def test_a_bare_answer_or_a_subjectless_predicate_is_a_fragment(text):
    assert is_fragment(text)


@pytest.mark.parametrize("text", ["The Berlin Wall fell in 1989.", "It fell in 1991.", "There are 8 planets.",
                                  "Requests does not apply a timeout.", "",
                                  # verbs the small tagger reads as plural nouns, an opening verb that is not the head
                                  "timeout_ms defaults to 500.", "pip-compile pins all dependencies.",
                                  "Write latency dropped by 10%.", "a" * 100_000,
                                  "Frank Herbert wrote it and published the first of six novels in the year 1965"])
def test_a_statement_or_a_long_claim_is_not(text):
    assert not is_fragment(text)


def test_an_unresolved_pronoun_needs_the_question_too():
    plain = Claim("It fell in 1991.", ((0, 16),))
    assert not needs_question(plain)
    assert needs_question(Claim("It fell in 1991.", ((0, 16),), note="'It' unresolved: no safe antecedent in the answer"))
    assert needs_question(Claim("1991.", ((0, 5),)))


class RecordingFaithfulness:
    name = "recording"
    needs = frozenset()

    def __init__(self):
        self.statements = []

    def predict(self, pairs, evidence=None):
        self.statements += [claim for _, claim in pairs]
        return np.full(len(pairs), 0.5)


@pytest.mark.parametrize("mode", ["long", "fast"])
def test_the_backend_reads_a_fragment_claim_after_its_question(tiny_lm, mode):
    faith = RecordingFaithfulness()
    fr = make_franq(tiny_lm, faithfulness=faith)
    res = fr.score(QUESTION, PASSAGES, "1991. The wall divided Berlin for 28 years.", mode=mode)
    assert [c.claim.text for c in res.claims] == ["1991.", "The wall divided Berlin for 28 years."]
    assert faith.statements == [f"{QUESTION} 1991.", "The wall divided Berlin for 28 years."]
    faith.statements.clear()
    answer = "Einstein was born in Ulm. Born in Ulm"
    fr.score(QUESTION, PASSAGES, answer, claims=["Einstein was born in Ulm.", "Born in Ulm"], mode=mode)
    assert faith.statements == ["Einstein was born in Ulm.", f"{QUESTION} Born in Ulm"]
