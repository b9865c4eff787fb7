"""RAGAS: franq as a RAGAS metric. ``pip install 'franq[ragas]'``.

``FranqMetric`` is a metric of RAGAS's current API (``ragas.metrics.collections``):
``await metric.ascore(user_input=, response=, retrieved_contexts=)`` (or ``score``,
``abatch_score``, ``batch_score``) returns a ``MetricResult``::

    value    P(true) of the answer's weakest claim (uncertain claims left out); NaN when no
             claim could be judged (RAGAS's own "no value", as its faithfulness metric gives)
    reason   names the weakest claim and counts the uncertain ones
    traces   {"output": {"score", "label", "reason", "claims": [{"index", "text", "p_true", "label"}]}}

``FranqEvalMetric`` is the same score as a ``SingleTurnMetric`` for ``ragas.evaluate(dataset,
metrics=[...])`` (that API carries a float per sample: the reason and claims are not kept).
Neither needs an LLM or embeddings. Scoring runs in the calling thread, one answer at a time
(a loaded :class:`franq.Franq` is not shared across threads).
"""
from __future__ import annotations

import functools
import math
from typing import Any

from franq.apps.integrations.lazy import module_getattr
from franq.apps.integrations.scores import DEFAULT_THRESHOLD, as_passages, need, scorer_of, summarize

NAME = "franq"


def score(user_input: str, response: str, retrieved_contexts: Any = None, *, scorer: Any = None,
          threshold: float = DEFAULT_THRESHOLD):
    """The answer's summary (:class:`~franq.apps.integrations.scores.AnswerSummary`) and its
    RAGAS value (NaN where the summary has none)."""
    summary = summarize(scorer_of(scorer)(user_input, as_passages(retrieved_contexts), response), threshold)
    return summary, (math.nan if summary.value is None else float(summary.value))


@functools.cache
def _metric_class() -> type:
    base = need("ragas.metrics.collections.base", "ragas", "RAGAS").BaseMetric
    MetricResult = need("ragas.metrics.result", "ragas", "RAGAS").MetricResult

    class FranqMetric(base):
        """franq's claim-level P(true) as a RAGAS metric (module docstring). ``scorer``: a
        :class:`franq.Franq` or a callable ``(question, passages, answer) -> AnswerScore``
        (default: the embedded pipeline, loaded at the first call)."""

        def __init__(self, *, scorer: Any = None, threshold: float = DEFAULT_THRESHOLD, name: str = NAME):
            super().__init__(name=name, allowed_values=(0.0, 1.0))
            self.scorer = scorer_of(scorer)
            self.threshold = threshold

        async def ascore(self, user_input: str, response: str, retrieved_contexts: Any = None):
            summary, value = score(user_input, response, retrieved_contexts, scorer=self.scorer,
                                   threshold=self.threshold)
            return MetricResult(value=value, reason=summary.reason, traces={"output": summary.to_dict()})

    return FranqMetric


@functools.cache
def _eval_metric_class() -> type:
    base = need("ragas.metrics.base", "ragas", "RAGAS")
    from dataclasses import dataclass, field

    @dataclass
    class FranqEvalMetric(base.SingleTurnMetric):
        """franq's answer value for ``ragas.evaluate`` (module docstring)."""

        name: str = NAME
        scorer: Any = None
        threshold: float = DEFAULT_THRESHOLD
        _required_columns: dict = field(default_factory=lambda: {
            base.MetricType.SINGLE_TURN: {"user_input", "response", "retrieved_contexts:optional"}})

        def __post_init__(self):
            super().__post_init__()
            self.scorer = scorer_of(self.scorer)

        def init(self, run_config: Any) -> None:
            """Nothing to set up: no LLM, no embeddings."""

        async def _single_turn_ascore(self, sample: Any, callbacks: Any = None) -> float:
            return score(sample.user_input, sample.response, sample.retrieved_contexts,
                         scorer=self.scorer, threshold=self.threshold)[1]

    return FranqEvalMetric


__getattr__ = module_getattr(__name__, {"FranqMetric": _metric_class, "FranqEvalMetric": _eval_metric_class})
