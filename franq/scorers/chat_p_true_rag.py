"""P(True) from a chat model, asked with the passages: UQ_faith for a user whose model sits
behind an OpenAI-compatible chat API, beside ``chat_p_true`` (asked without them) for
UQ_unfaith, so both FRANQ terms come from the user's own model.

FRANQ computes a UQ method twice, with and without the retrieved passages (paper 001,
section 2: UQ_faith "with retrieval", UQ_unfaith without); P(True) (Kadavath et al., 2022) is
one of the methods it lists. With the passages, the prompt is :data:`TEMPLATE` of
``chat_p_true`` (LM-Polygraph's claim-level P(True), word for word) after the passages as
franq's answer prompt shows them (:func:`franq.lm.prompts.format_passages`):

    Passages:
    [1] Eiffel Tower
    The tower was built from 1887 to 1889.

    Question: {question}
     Possible answer:{claim}
     Is the possible answer True or False? The possible answer is:

Everything else is ``chat_p_true``'s: the system line, one completion token with
``top_logprobs``, P(True) = p(True) / (p(True) + p(False)), the one-line refusal when the
server sends no log-probabilities, concurrency and retries through the one client factory.
Its own table ``[scorers.chat_p_true_rag]`` takes the same settings (``model`` required), so
the two terms may come from one model or two; a setting it leaves unset is read from
``[scorers.chat_p_true]`` (``settings_from``), so one model is written once.

Cost per claim: one request of ``chat_p_true``'s size plus the passages' tokens (a claim
repeated under the same question and passages in one call is asked once); an answer of 9
claims against 3 passages of 150 tokens is 9 requests and about 4,700 prompt tokens.
"""
from __future__ import annotations

from franq.lm.prompts import format_passages
from franq.scorers.base import Signal
from franq.scorers.chat_p_true import SYSTEM, TEMPLATE, ChatPTrueScorer


def p_true_rag_messages(question: str, passages: str, claim: str) -> list[dict[str, str]]:
    """The P(True) prompt for one claim with the passages (already formatted), as chat messages."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Passages:\n{passages}\n\n" + TEMPLATE.format(question=question, claim=claim)}]


class ChatPTrueRagScorer(ChatPTrueScorer):
    """P(True) of each claim from an OpenAI-compatible chat model, asked with the passages."""

    name = "chat_p_true_rag"
    settings_from = "chat_p_true"
    """Unset settings come from ``[scorers.chat_p_true]``'s table: one model, one table."""
    signals = (Signal("p_true_chat_rag", "prob", True, "P(True): the chat model's p('True') / (p('True') + "
                                                       "p('False')) for the claim, asked with the passages"),)

    def key(self, e) -> tuple:
        return e.question, format_passages(e.passages), e.claim.text

    def messages(self, key: tuple) -> list[dict[str, str]]:
        return p_true_rag_messages(*key)
