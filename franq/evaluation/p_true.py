"""P(True) (Kadavath et al. 2022), a reflexive baseline: after the model has answered, ask
it whether the answer (short form) or one claim of it (long form) is true, and read the
next-token probabilities of "True" and "False".

The follow-up is a new user turn in the same chat, so the prompt is the RAG prompt, the
answer, then the question (:data:`franq.lm.prompts.ANSWER_QUESTION`,
:data:`~franq.lm.prompts.CLAIM_QUESTION`); the prefix (prompt + answer) is run once and
each follow-up costs only its own tokens
(:meth:`franq.lm.model.CausalLM.next_token_logprobs_after`).
``P(True) = p(True) / (p(True) + p(False))`` (:func:`franq.lm.labels.pair_probability`,
the two-way normalized probability, so that it is a probability for ECE; the ranking
equals log p(True) - log p(False)). Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

from franq.lm.labels import LabelWords
from franq.lm.prompts import CLAIM_QUESTION, P_TRUE_LABELS, followup_text


class PTrue:
    """Builds the follow-up tokens; ``candidates`` are the first tokens of "True" and
    "False", whose two next-token log-probabilities give P(True)."""

    name = "p_true"

    def __init__(self, lm):
        self.lm = lm
        self.labels = LabelWords.lookup(lm, *P_TRUE_LABELS)
        self.candidates = self.labels.candidates

    def followup(self, answer: str, text: str) -> list[int]:
        """Tokens that follow a rendered prompt + ``answer``: the end of the answer turn, a
        user turn holding ``text`` and the start of the assistant's reply."""
        return self.lm.encode(followup_text(self.lm.tokenizer, answer, text))

    def claim_followups(self, answer: str, claims: Sequence[str]) -> list[list[int]]:
        return [self.followup(answer, CLAIM_QUESTION.format(claim=c.strip())) for c in claims]
