"""The limits ``franq serve`` checks on a request before any work, from the one table
(:mod:`franq.limits`, the same as ``franq score`` uses), and the validation of the
result record ``POST /render`` is given (what ``POST /score`` returns, read back like
``franq report`` reads it, with each probability in [0, 1]).

A request over a limit is a 413 whose detail names the limit and how to raise it
(``--limit NAME=N``); a wrong field is a 400 naming it."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import franq
from franq import limits as table
from franq.apps import render

VIEW_MARKS_PER_SPAN = 8
"""The highlighted view marks at most this many claim-piece pairs per allowed span
(``render_spans``): spans nested so deep that it would mark more are refused."""


def _at(where: str, field: str) -> str:
    return f"{where}: '{field}'" if where else f"'{field}'"


def _texts(value: Any) -> list[str]:
    """The texts of a passages or claims list as given (strings or ``{"text"}`` objects);
    what is not text is left for the field validation to name."""
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        text = item.get("text") if isinstance(item, Mapping) else item
        out.append(text if isinstance(text, str) else "")
    return out


def check_example(obj: Any, limits: Mapping[str, int], where: str = "") -> None:
    """The per-answer limits of one example (a /score body, an item of /score_many, an
    /answer body, a record given to /render): passages, characters per passage and in
    all, characters of the question and the answer, claims and characters per claim."""
    if not isinstance(obj, Mapping):
        return
    for key, limit in (("question", "question_chars"), ("answer", "answer_chars")):
        if isinstance(obj.get(key), str):
            table.check(limit, len(obj[key]), where=_at(where, key), limits=limits)
    passages = _texts(obj.get("passages"))
    table.check("passages", len(passages), where=_at(where, "passages"), limits=limits)
    for i, text in enumerate(passages):
        table.check("passage_chars", len(text), where=_at(where, f"passages[{i}]"), limits=limits)
    table.check("context_chars", sum(map(len, passages)), where=_at(where, "passages"), limits=limits)
    claims = obj.get("claims")
    if isinstance(claims, list):
        table.check("claims", len(claims), where=_at(where, "claims"), limits=limits)
        if not all(isinstance(c, Mapping) and "claim" in c for c in claims):  # given claims, not results
            for i, text in enumerate(_texts(claims)):
                table.check("claim_chars", len(text), where=_at(where, f"claims[{i}]"), limits=limits)


def render_line(record: Any, limits: Mapping[str, int]) -> render.Line:
    """A /render body read back as a result line, validated: the limits, every field
    (:func:`franq.read_results`), each probability in [0, 1], the spans within
    ``render_spans``."""
    if not isinstance(record, Mapping) or not isinstance(record.get("claims"), list) \
            or not isinstance(record.get("answer"), str):
        raise franq.InputError("body: expected a result record with 'answer' and 'claims' (what /score returns)")
    check_example(record, limits, "body")
    if record.get("meta") is not None and not isinstance(record["meta"], Mapping):
        raise franq.InputError(f"body: 'meta' must be a JSON object or null, got {type(record['meta']).__name__}")
    given = 0
    for i, c in enumerate(record["claims"]):
        if not isinstance(c, Mapping):
            raise franq.InputError(f"body: 'claims[{i}]' must be an object (a scored claim), "
                                   f"got {type(c).__name__}")
        spans = c["claim"].get("char_spans") if isinstance(c.get("claim"), Mapping) else None
        given += len(spans) if isinstance(spans, list) else 0
    table.check("render_spans", given, where="body: 'claims[].claim.char_spans'", limits=limits)  # before reading
    # a wrong field, a probability out of [0, 1]: InputError
    line = next(franq.read_results(record, with_input=True, name="body"))
    spans = sum(len(c.claim.char_spans) for c in line.result.claims)
    table.check("render_spans", spans, where="body: 'claims[].claim.char_spans'", limits=limits)
    return render.Line(line.id, line.result, line.example)


def view_html(line: render.Line, limits: Mapping[str, int]) -> str:
    """The highlighted view of one validated line (in a worker thread: the segmentation is
    O(n log n) in the spans, bounded by :data:`VIEW_MARKS_PER_SPAN`)."""
    render.segments(line.result.scored_answer, line.result.claims,
                    max_marks=VIEW_MARKS_PER_SPAN * limits.get("render_spans", table.LIMITS["render_spans"].default))
    return render.answer_html(line, 0)
