"""LangSmith / openevals: franq as an evaluator, a callable ``(*, inputs, outputs, ...)``
returning ``{"key": "franq", "score", "comment"}`` (or one per claim). It needs no package:
LangSmith's ``evaluate(..., evaluators=[franq_evaluator])`` and openevals-style code call it.

``inputs``: the question (a string) or a dict holding it (``question``, ``user_input``,
``input``, ``query``); ``outputs``: the answer or a dict (``answer``, ``response``,
``output``, ``actual_output``); ``context``: the retrieved passages (strings, dicts or
documents), else read from ``inputs`` / ``outputs`` (``passages``, ``retrieved_contexts``,
``contexts``, ``documents``, ``retrieval_context``, ``context``: :data:`franq.io.FIELD_NAMES`). ``score`` is P(true): the answer's weakest claim's (uncertain claims
left out, and counted in the comment), or each claim's with ``per_claim=True`` (its label,
``uncertain`` included, in the comment and ``metadata``). An answer with no claim left to
judge gets ``score: None`` and says why in its comment.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from franq import InputError
from franq.io import FIELD_NAMES
from franq.apps.integrations.scores import DEFAULT_THRESHOLD, as_passages, pick, scorer_of, summarize

KEY = "franq"
QUESTION_KEYS, ANSWER_KEYS, CONTEXT_KEYS = (FIELD_NAMES[f] for f in ("question", "answer", "passages"))


def franq_evaluator(*, inputs: Any, outputs: Any, context: Any = None, scorer: Any = None,
                    per_claim: bool = False, threshold: float = DEFAULT_THRESHOLD, **kw: Any) -> dict | list[dict]:
    """Score one run's answer (module docstring); other keyword arguments
    (``reference_outputs``...) are accepted and not read."""
    question = _text(inputs, QUESTION_KEYS, "inputs")
    answer = _text(outputs, ANSWER_KEYS, "outputs")
    if context is None:
        for source in (inputs, outputs):
            if isinstance(source, Mapping) and context is None:
                context = pick(source, CONTEXT_KEYS, "context", required=False)
    result = scorer_of(scorer)(question, as_passages(context), answer)
    summary = summarize(result, threshold)
    if not per_claim:
        return {"key": KEY, "score": summary.value, "comment": summary.reason}
    return [{"key": KEY, "score": c.value,
             "comment": f"claim #{c.index} {c.text!r}: {c.label}",
             "metadata": {"claim_index": c.index, "claim": c.text, "label": c.label}}
            for c in summary.claims]


def make_franq_evaluator(*, scorer: Any = None, per_claim: bool = False, threshold: float = DEFAULT_THRESHOLD):
    """:func:`franq_evaluator` with its scorer, ``per_claim`` and threshold fixed (load a
    :class:`franq.Franq` once, evaluate many runs)."""
    def evaluator(*, inputs: Any, outputs: Any, context: Any = None, **kw: Any):
        return franq_evaluator(inputs=inputs, outputs=outputs, context=context, scorer=scorer,
                               per_claim=per_claim, threshold=threshold, **kw)
    evaluator.__name__ = "franq_evaluator"
    return evaluator


def _text(value: Any, keys: tuple[str, ...], what: str) -> Any:
    if isinstance(value, Mapping):
        return pick(value, keys, what)
    if isinstance(value, str):
        return value
    raise InputError(f"{what}: expected a string or a dict with one of {list(keys)}, got {type(value).__name__}")
