"""DeepEval: franq as a DeepEval metric. ``pip install 'franq[deepeval]'``.

``FranqMetric`` is a ``deepeval.metrics.BaseMetric``: ``measure(test_case)`` /
``await a_measure(test_case)`` read an ``LLMTestCase``'s ``input``, ``actual_output`` and
``retrieval_context`` (strings or ``RetrievedContextData``, whose ``source`` becomes the
passage's title; no retrieval context: the answer is scored closed-book) and set::

    score            P(true) of the answer's weakest claim (uncertain claims left out), or
                     None when no claim could be judged
    success          score >= threshold; False when score is None (nothing to vouch for)
    reason           names the weakest claim and counts the uncertain ones
    score_breakdown  {"label", "claims": [{"index", "text", "p_true", "label"}]}

It works with ``deepeval.evaluate(...)`` and ``assert_test(...)`` and needs no LLM judge.
Scoring runs in the calling thread, one test case at a time.
"""
from __future__ import annotations

import functools
from typing import Any

from franq import InputError
from franq.apps.integrations.lazy import module_getattr
from franq.apps.integrations.scores import DEFAULT_THRESHOLD, as_passages, need, scorer_of, summarize

NAME = "franq"


def _passages(context: Any) -> list:
    """``retrieval_context`` as passages: a ``RetrievedContextData`` (``context``, ``source``)
    becomes ``{"title": source, "text": context}``."""
    return [{"title": str(c.source), "text": c.context} if hasattr(c, "source") and hasattr(c, "context") else c
            for c in as_passages(context)]


@functools.cache
def _metric_class() -> type:
    base = need("deepeval.metrics", "deepeval", "DeepEval").BaseMetric

    class FranqMetric(base):
        """franq's claim-level P(true) as a DeepEval metric (module docstring). ``scorer``: a
        :class:`franq.Franq` or a callable ``(question, passages, answer) -> AnswerScore``
        (default: the embedded pipeline, loaded at the first call)."""

        def __init__(self, *, scorer: Any = None, threshold: float = DEFAULT_THRESHOLD, include_reason: bool = True):
            self.scorer = scorer_of(scorer)
            self.threshold = threshold
            self.include_reason = include_reason
            self.evaluation_model = NAME
            self.async_mode = False  # franq scores in the calling thread; a_measure is the same call
            self.evaluation_cost = 0.0

        def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float | None:
            answer = getattr(test_case, "actual_output", None)
            if answer is None:
                raise InputError("franq DeepEval metric: the test case has no 'actual_output' to score")
            summary = summarize(self.scorer(test_case.input, _passages(test_case.retrieval_context), answer),
                                self.threshold)
            self.score = summary.value
            self.reason = summary.reason if self.include_reason else None
            self.score_breakdown = {"label": summary.label, "claims": [c.to_dict() for c in summary.claims]}
            self.success = self.score is not None and self.score >= self.threshold
            return self.score

        async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float | None:
            return self.measure(test_case)

        def is_successful(self) -> bool:
            return bool(self.success) and self.error is None

        @property
        def __name__(self) -> str:
            return "franq"

    return FranqMetric


__getattr__ = module_getattr(__name__, {"FranqMetric": _metric_class})
