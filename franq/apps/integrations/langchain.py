"""LangChain: a guard that scores an answer in a chain and flags it, with the claim scores
attached, and a callback handler that scores each run's answer without changing the chain.
``pip install 'franq[langchain]'``.

``franq_guard()`` is a ``RunnableLambda`` taking ``{"question", "answer", "context" or
"documents"}`` (strings, dicts or LangChain ``Document`` objects; RAGAS names are read too)
and returning the same dict plus::

    "franq":   {"score": P(true) of the weakest claim (None: no claim could be judged),
                "label", "reason" (names the weakest claim),
                "claims": [{"index", "text", "p_true", "label"}]}
    "flagged": True when the score is below the threshold, or None (nothing to vouch for)

Uncertain claims are labelled ``"uncertain"`` and left out of the score; an answer whose
claims are all uncertain is flagged. ``callback_handler()``: see its docstring.
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from franq import InputError
from franq.io import FIELD_NAMES
from franq.apps.integrations.scores import DEFAULT_THRESHOLD, as_passages, need, pick, scorer_of, summarize

QUESTION_KEYS, ANSWER_KEYS, CONTEXT_KEYS = (FIELD_NAMES[f] for f in ("question", "answer", "passages"))


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
    lock = threading.Lock()  # abatch runs the guard in several threads: one answer scored at a time

    def guard(value: dict) -> dict:
        with lock:
            return check(value, scorer=resolved, threshold=threshold)
    return runnables.RunnableLambda(guard, name=name)


def callback_handler(*, scorer: Any = None, threshold: float = DEFAULT_THRESHOLD, on_result: Any = None):
    """A ``langchain_core`` callback handler that scores what each top-level run answered,
    without changing the chain: pass it as ``chain.invoke(x, config={"callbacks": [handler]})``.

    For each run started with no parent it takes the question from the run's input (a string,
    or a dict's ``question`` / ``user_input`` / ``input`` / ``query``), the passages from the
    documents its retrievers returned (else from a ``context`` / ``documents`` ... key of its
    input or output) and the answer from its output (a string, a message's ``content``, or a
    dict's ``answer`` / ``response`` / ``output``). ``handler.results`` collects one dict per
    scored run, ``{"run_id", "question", "answer", "franq", "flagged"}`` as the guard's;
    ``on_result`` is called with each. A run with no question or answer to read is skipped
    (``handler.skipped`` counts them). Runs scored at once (``chain.batch``) are scored one
    at a time: a loaded pipeline is not shared across threads. Errors follow LangChain's rule
    for handlers: logged, not raised, unless ``handler.raise_error = True``."""
    base = need("langchain_core.callbacks", "langchain", "LangChain").BaseCallbackHandler
    resolved = scorer_of(scorer)

    class FranqCallbackHandler(base):
        def __init__(self):
            super().__init__()
            self.results: list[dict] = []
            self.skipped = 0
            self._root: dict = {}     # run id -> its top-level run's id
            self._runs: dict = {}     # top-level run id -> {"inputs", "documents"}
            self._lock = threading.RLock()  # a batch's runs call back from several threads

        def _track(self, run_id, parent_run_id):
            root = self._root.get(parent_run_id, run_id) if parent_run_id is not None else run_id
            self._root[run_id] = root
            return root

        def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs):
            with self._lock:
                if self._track(run_id, parent_run_id) == run_id:
                    self._runs[run_id] = {"inputs": inputs, "documents": []}

        def on_retriever_start(self, serialized, query, *, run_id, parent_run_id=None, **kwargs):
            with self._lock:
                self._track(run_id, parent_run_id)

        def on_retriever_end(self, documents, *, run_id, **kwargs):
            with self._lock:
                run = self._runs.get(self._root.pop(run_id, None))
                if run is not None:
                    run["documents"].extend(documents)

        def on_retriever_error(self, error, *, run_id, **kwargs):
            with self._lock:
                self._root.pop(run_id, None)

        def _end(self, run_id):
            """The top-level run's record when ``run_id`` is one (forgotten here), else None."""
            with self._lock:
                if self._root.get(run_id) != run_id:
                    return None
                self._root = {k: v for k, v in self._root.items() if v != run_id}
                return self._runs.pop(run_id, None)

        def on_chain_error(self, error, *, run_id, **kwargs):
            self._end(run_id)

        def on_chain_end(self, outputs, *, run_id, **kwargs):
            run = self._end(run_id)
            if run is None:
                return  # a step inside a run: the run is scored when it ends
            with self._lock:
                self._score(run_id, run, outputs)

        def _score(self, run_id, run, outputs):
            question, answer = _question(run["inputs"]), _answer(outputs)
            if question is None or answer is None:
                self.skipped += 1
                return
            context = run["documents"] or _context(run["inputs"], outputs)
            summary = summarize(resolved(question, as_passages(context), answer), threshold)
            result = {"run_id": run_id, "question": question, "answer": answer, "franq": summary.to_dict(),
                      "flagged": summary.value is None or summary.value < threshold}
            self.results.append(result)
            if on_result is not None:
                on_result(result)

    return FranqCallbackHandler()


def _question(inputs: Any) -> Any:
    if isinstance(inputs, str):
        return inputs
    return pick(inputs, QUESTION_KEYS, "question", required=False) if isinstance(inputs, Mapping) else None


def _context(*sources: Any) -> Any:
    for source in sources:
        if isinstance(source, Mapping) and (found := pick(source, CONTEXT_KEYS, "context", required=False)) is not None:
            return found
    return None


def _answer(outputs: Any) -> Any:
    if isinstance(outputs, Mapping):
        outputs = pick(outputs, ANSWER_KEYS, "answer", required=False)
    content = getattr(outputs, "content", outputs)  # a message, or the text itself
    return content if isinstance(content, str) else None
