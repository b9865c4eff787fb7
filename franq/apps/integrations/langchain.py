"""LangChain: a guard that scores an answer in a chain and flags it, with the claim scores
attached. ``pip install 'franq[langchain]'``.

``franq_guard()`` is a ``RunnableLambda`` taking ``{"question", "answer", "context" or
"documents"}`` (strings, dicts or LangChain ``Document`` objects; RAGAS names are read too)
and returning the same dict plus::

    "franq":   {"score": P(true) of the weakest claim (None: no claim could be judged),
                "label", "reason" (names the weakest claim),
                "claims": [{"index", "text", "p_true", "label"}]}
    "flagged": True when the score is below the threshold, or None (nothing to vouch for)

Uncertain claims are labelled ``"uncertain"`` and left out of the score; an answer whose
claims are all uncertain is flagged.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from franq import InputError
from franq.apps.integrations.scores import DEFAULT_THRESHOLD, as_passages, need, pick, scorer_of, summarize

QUESTION_KEYS = ("question", "user_input", "input", "query")
ANSWER_KEYS = ("answer", "response", "output")
CONTEXT_KEYS = ("context", "documents", "passages", "contexts", "retrieved_contexts")


def check(value: Any, *, scorer: Any = None, threshold: float = DEFAULT_THRESHOLD) -> dict:
    """What the guard does to one input dict, without LangChain (its function)."""
    if not isinstance(value, Mapping):
        raise InputError(f"franq guard: expected a dict with 'question', 'answer' and 'context', "
                         f"got {type(value).__name__}")
    question = pick(value, QUESTION_KEYS, "franq guard input")
    answer = pick(value, ANSWER_KEYS, "franq guard input")
    context = pick(value, CONTEXT_KEYS, "franq guard input", required=False)
    summary = summarize(scorer_of(scorer)(question, as_passages(context), answer), threshold)
    flagged = summary.value is None or summary.value < threshold
    return {**value, "franq": summary.to_dict(), "flagged": flagged}


def franq_guard(*, scorer: Any = None, threshold: float = DEFAULT_THRESHOLD, name: str = "franq_guard"):
    """A ``langchain_core.runnables.RunnableLambda`` around :func:`check`. ``scorer``: a
    :class:`franq.Franq` or a callable ``(question, passages, answer) -> AnswerScore``
    (default: the embedded pipeline, loaded at the first call)."""
    runnables = need("langchain_core.runnables", "langchain", "LangChain")
    resolved = scorer_of(scorer)

    def guard(value: dict) -> dict:
        return check(value, scorer=resolved, threshold=threshold)
    return runnables.RunnableLambda(guard, name=name)
