"""LlamaIndex: franq as a LlamaIndex evaluator. ``pip install 'franq[llamaindex]'``.

``FranqEvaluator`` is a ``llama_index.core.evaluation.BaseEvaluator``:
``await evaluator.aevaluate(query=, response=, contexts=)`` (or ``evaluate``,
``evaluate_response(query, response=Response)``, ``BatchEvalRunner``) returns a
``FranqEvaluationResult``, an ``EvaluationResult`` with two more fields::

    score     P(true) of the answer's weakest claim (uncertain claims left out), or None when
              no claim could be judged
    passing   score >= threshold; None when score is None (LlamaIndex's "not decided")
    feedback  names the weakest claim and counts the uncertain ones
    label     likely_true | likely_false | uncertain
    claims    [{"index", "text", "p_true", "label"}]

``contexts`` may be strings, dicts or nodes; ``evaluate_response`` passes the response's
source nodes themselves, so a node's ``metadata["title"]`` titles its passage. No LLM is
used. Scoring runs in the calling thread, one answer at a time.
"""
from __future__ import annotations

import functools
from typing import Any

from franq import InputError
from franq.apps.integrations.lazy import module_getattr
from franq.apps.integrations.scores import DEFAULT_THRESHOLD, as_passages, need, scorer_of, summarize


@functools.cache
def _classes() -> tuple[type, type]:
    base = need("llama_index.core.evaluation", "llamaindex", "LlamaIndex")

    class FranqEvaluationResult(base.EvaluationResult):
        """An ``EvaluationResult`` with franq's label and per-claim scores."""

        label: str | None = None
        claims: list[dict] = []  # noqa: RUF012 - a pydantic field: each result gets its own copy

    class FranqEvaluator(base.BaseEvaluator):
        """franq's claim-level P(true) as a LlamaIndex evaluator (module docstring).
        ``scorer``: a :class:`franq.Franq` or a callable ``(question, passages, answer) ->
        AnswerScore`` (default: the embedded pipeline, loaded at the first call)."""

        def __init__(self, *, scorer: Any = None, threshold: float = DEFAULT_THRESHOLD):
            self._scorer = scorer_of(scorer)
            self._threshold = threshold

        def _get_prompts(self) -> dict:
            return {}  # no LLM, no prompt

        def _update_prompts(self, prompts: dict) -> None:
            pass

        async def aevaluate(self, query: str | None = None, response: str | None = None,
                            contexts: Any = None, **kwargs: Any) -> FranqEvaluationResult:
            if query is None or response is None:
                raise InputError("franq LlamaIndex evaluator: 'query' and 'response' are required")
            passages = as_passages(contexts)
            summary = summarize(self._scorer(query, passages, response), self._threshold)
            return FranqEvaluationResult(
                query=query, response=response, contexts=[_text(p) for p in passages],
                score=summary.value, passing=None if summary.value is None else summary.value >= self._threshold,
                feedback=summary.reason, label=summary.label, claims=[c.to_dict() for c in summary.claims])

        def evaluate_response(self, query: str | None = None, response: Any = None,
                              **kwargs: Any) -> FranqEvaluationResult:
            return self.evaluate(query=query, **_from_response(response), **kwargs)

        async def aevaluate_response(self, query: str | None = None, response: Any = None,
                                     **kwargs: Any) -> FranqEvaluationResult:
            return await self.aevaluate(query=query, **_from_response(response), **kwargs)

    return FranqEvaluator, FranqEvaluationResult


def _from_response(response: Any) -> dict:
    """A LlamaIndex ``Response``'s text and its source nodes themselves (their metadata kept)."""
    if response is None or not hasattr(response, "source_nodes"):
        raise InputError(f"franq LlamaIndex evaluator: 'response' must be a Response with source_nodes, "
                         f"got {type(response).__name__}")
    return {"response": response.response, "contexts": list(response.source_nodes)}


def _text(passage: Any) -> str:
    """A passage's text as ``EvaluationResult.contexts`` holds it."""
    if isinstance(passage, str):
        return passage
    if callable(getattr(passage, "get_content", None)):
        return passage.get_content()
    if isinstance(passage, dict):
        return str(next((passage[k] for k in ("text", "page_content", "content") if k in passage), passage))
    return str(getattr(passage, "page_content", None) or getattr(passage, "content", None) or passage)


__getattr__ = module_getattr(__name__, {"FranqEvaluator": lambda: _classes()[0],
                                         "FranqEvaluationResult": lambda: _classes()[1]})
