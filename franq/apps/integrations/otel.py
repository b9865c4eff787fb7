"""OpenTelemetry: franq's scores as ``gen_ai.evaluation.result`` events on a span (the GenAI
semantic conventions; Arize Phoenix and other OTel backends read them). ``pip install 'franq[otel]'``.

One event per claim and one per answer, each with::

    gen_ai.evaluation.name         "franq"
    gen_ai.evaluation.score.value  P(true) (the claim's; the answer's: its weakest claim's, uncertain
                                   claims left out). Left out when there is none (an unscored
                                   claim; an answer with no claim left to judge)
    gen_ai.evaluation.score.label  likely_true | likely_false | uncertain | not_scored
    gen_ai.evaluation.explanation  why (the answer's names its weakest claim)
    gen_ai.response.id             the response's id, when given
    franq.claim.text, franq.claim.index   (claim events only)
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from franq import AnswerScore
from franq.apps.integrations.scores import DEFAULT_THRESHOLD, as_passages, need, scorer_of, summarize

EVENT = "gen_ai.evaluation.result"
NAME = "franq"


def add_events(result: AnswerScore, *, span: Any = None, response_id: str | None = None,
               threshold: float = DEFAULT_THRESHOLD) -> list[dict]:
    """Add the events of ``result`` to ``span`` (default: the current span); returns their
    attributes, claims first, the answer's last."""
    if span is None:
        span = need("opentelemetry.trace", "otel", "OpenTelemetry").get_current_span()
    summary = summarize(result, threshold)
    common = {"gen_ai.evaluation.name": NAME, **({"gen_ai.response.id": response_id} if response_id else {})}
    events = []
    for c in summary.claims:
        explanation = (f"claim #{c.index}: P(true) = {c.value:.2f}" if c.value is not None
                       else f"claim #{c.index}: no P(true)") + f" ({c.label})"
        events.append({**common, **_score(c.value), "gen_ai.evaluation.score.label": c.label,
                       "gen_ai.evaluation.explanation": explanation,
                       "franq.claim.text": c.text, "franq.claim.index": c.index})
    events.append({**common, **_score(summary.value), "gen_ai.evaluation.score.label": summary.label,
                   "gen_ai.evaluation.explanation": summary.reason})
    for attributes in events:
        span.add_event(EVENT, attributes=attributes)
    return events


def _score(value: float | None) -> dict:
    return {} if value is None else {"gen_ai.evaluation.score.value": float(value)}


def evaluate(question: str, context: Any, answer: str, *, scorer: Any = None, span: Any = None,
             response_id: str | None = None, threshold: float = DEFAULT_THRESHOLD) -> AnswerScore:
    """Score ``answer`` against ``context`` (passages, strings or documents) and add the
    events to ``span`` (default: the current span). ``scorer``: a :class:`franq.Franq` or a
    callable ``(question, passages, answer) -> AnswerScore`` (default: the embedded pipeline)."""
    if span is None:
        span = need("opentelemetry.trace", "otel", "OpenTelemetry").get_current_span()
    passages: Sequence = as_passages(context)
    result = scorer_of(scorer)(question, passages, answer)
    add_events(result, span=span, response_id=response_id, threshold=threshold)
    return result
