"""A tiny deterministic scorer for examples and tests of the adapters: no model, no download.

:func:`fake_scorer` returns a callable ``(question, passages, answer) -> AnswerScore`` with
the signature every adapter's ``scorer=`` accepts. Its claims are the answer's sentences;
a claim's P(true) is the share of its words (3 letters or more) found in the passages, so
"built in 1889" against a passage saying so is high and "made of gold" is low. A claim
with no such word (e.g. "Yes.") is marked ``verdict="uncertain"``. Not a model of truth:
it stands in for :class:`franq.Franq` where only the adapter's plumbing is tested.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from franq import AnswerScore, read_results
from franq.io import parse_passages, parse_text

FAKE_STACK = {"model": "fake", "faithfulness": "word-overlap", "uq_faith": "none", "uq_unfaith": "none",
              "prompt_version": "none", "mode": "fake"}
_WORD = re.compile(r"[A-Za-z0-9]{3,}")


def fake_scorer(threshold: float = 0.5) -> Callable[..., AnswerScore]:
    """A scorer ``(question, passages, answer) -> AnswerScore`` (passages as franq accepts them:
    strings, dicts, documents); each claim's verdict reads P(true) against ``threshold``."""
    def score(question: str, passages: Sequence, answer: str) -> AnswerScore:
        parse_text(question, "question")
        context = {w.lower() for p in parse_passages(passages) for w in _WORD.findall(f"{p.title} {p.text}")}
        claims = [_claim(m.group(0).strip(), m.start() + len(m.group(0)) - len(m.group(0).lstrip()), context, threshold)
                  for m in re.finditer(r"[^.!?]+[.!?]?", parse_text(answer, "answer")) if m.group(0).strip()]
        record = {"schema": 2, "id": None, "question": question, "answer": answer, "mode": "long",
                  "stack": FAKE_STACK, "calibrator": None, "warnings": [], "decision": None,
                  "claims": [c for c, _ in claims]}
        result = next(read_results(record))  # the record checked as any output line is
        return dataclasses.replace(result, claims=tuple(
            dataclasses.replace(c, verdict="uncertain") if uncertain else c
            for c, (_, uncertain) in zip(result.claims, claims)))
    return score


def _claim(text: str, start: int, context: set[str], threshold: float) -> tuple[dict, bool]:
    """One claim as an output line writes it, and whether it is uncertain (no word to check)."""
    words = [w.lower() for w in _WORD.findall(text)]
    p = round(sum(w in context for w in words) / len(words), 4) if words else 0.5
    claim = {"text": text, "char_spans": [[start, start + len(text)]], "token_positions": [], "token_ids": [],
             "sentence": 0, "check_worthy": True, "note": None}
    return {"claim": claim, "status": "scored", "p_faithful": p, "p_true_raw": p,
            "verdict": "likely_true" if p >= threshold else "likely_false"}, not words
