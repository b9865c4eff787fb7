"""Haystack: franq as a Haystack component. ``pip install 'franq[haystack]'``.

``FranqEvaluator`` is a ``@component`` with the input sockets of Haystack's own
``FaithfulnessEvaluator`` (an LLM judge), so it takes its place in a pipeline::

    run(questions: list[str], contexts: list[list[str | Document]], predicted_answers: list[str])
    -> {"individual_scores": [P(true) of each answer's weakest claim, or None],
        "score": the mean of the individual scores that are not None (None when none is),
        "results": [{"score", "label", "reason", "claims": [{"index", "text", "p_true", "label"}],
                     "statements", "statement_scores"}]}

An answer's score leaves its uncertain claims out; with no claim left to judge it is None
and its label ``uncertain`` (Haystack has no such value), and the mean leaves it out.
``statements`` / ``statement_scores`` are the claims and their P(true), named as
``FaithfulnessEvaluator`` names them. A ``Document``'s ``meta["title"]`` titles its passage.
No LLM is used; one run scores at a time, also under concurrent ``Pipeline.run_async``.
(Not serialisable with ``Pipeline.dumps``: the scorer is a live object.)
"""
import functools
import threading
from typing import Any

from franq import InputError
from franq.apps.integrations.lazy import module_getattr
from franq.apps.integrations.scores import DEFAULT_THRESHOLD, as_passages, need, scorer_of, summarize


def evaluate(questions: list[str], contexts: list[list[Any]], predicted_answers: list[str], *,
             scorer: Any = None, threshold: float = DEFAULT_THRESHOLD) -> dict:
    """What the component's ``run`` returns (module docstring), without Haystack."""
    lengths = {"questions": len(questions), "contexts": len(contexts), "predicted_answers": len(predicted_answers)}
    if len(set(lengths.values())) != 1:
        raise InputError(f"franq Haystack evaluator: the inputs differ in length ({lengths})")
    score = scorer_of(scorer)
    results = []
    for question, context, answer in zip(questions, contexts, predicted_answers):
        summary = summarize(score(question, as_passages(context), answer), threshold)
        results.append({**summary.to_dict(), "statements": [c.text for c in summary.claims],
                        "statement_scores": [c.value for c in summary.claims]})
    individual = [r["score"] for r in results]
    valued = [s for s in individual if s is not None]
    return {"individual_scores": individual, "score": sum(valued) / len(valued) if valued else None,
            "results": results}


@functools.cache
def _component_class() -> type:
    component = need("haystack", "haystack", "Haystack").component

    @component
    class FranqEvaluator:
        """franq's claim-level P(true) as a Haystack component (module docstring). ``scorer``:
        a :class:`franq.Franq` or a callable ``(question, passages, answer) -> AnswerScore``
        (default: the embedded pipeline, loaded at the first call)."""

        def __init__(self, scorer: Any = None, threshold: float = DEFAULT_THRESHOLD):
            self.scorer = scorer_of(scorer)
            self.threshold = threshold
            self._lock = threading.Lock()  # run_async runs a sync component in worker threads

        @component.output_types(individual_scores=list[float | None], score=float | None,
                                results=list[dict])
        def run(self, questions: list[str], contexts: list[list[Any]], predicted_answers: list[str]) -> dict:
            with self._lock:
                return evaluate(questions, contexts, predicted_answers, scorer=self.scorer, threshold=self.threshold)

    return FranqEvaluator


__getattr__ = module_getattr(__name__, {"FranqEvaluator": _component_class})
