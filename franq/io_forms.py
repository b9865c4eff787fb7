"""Inputs as RAG systems write them, turned into franq's own fields (used by :mod:`franq.io`).

* Field aliases: RAGAS ``user_input`` -> ``question``, ``response`` -> ``answer``,
  ``retrieved_contexts`` -> ``passages``, and a ``contexts`` key -> ``passages``. An alias
  and the name it stands for, both given, is refused in one line naming both.
* Fallback names, read only when neither franq's name nor an alias is given (else kept as an
  unknown field: a RAG log's rewritten ``query`` beside its ``question`` is not refused):
  ``query`` / ``input`` -> ``question`` (LlamaIndex, Haystack, DeepEval), ``output`` /
  ``actual_output`` -> ``answer``, ``documents`` / ``retrieval_context`` / ``context`` ->
  ``passages``. The framework adapters take the same names (:data:`FIELD_NAMES`).
* Documents as passages, duck-typed (no framework is imported): LangChain ``Document``
  (``page_content``, ``metadata``), Haystack ``Document`` (``content``, ``meta``),
  LlamaIndex nodes (``get_content()`` or ``.text``, and ``.metadata``), and their dict forms
  ``{"page_content", "metadata"}``, ``{"content", "meta"}``, ``{"text", "metadata"}``.
  A document's title is its metadata's ``"title"`` (a string) when present.
* Unknown fields: kept, not refused (see :class:`UnknownFields`), unless strict.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger("franq.io")

ALIASES = {"user_input": "question", "response": "answer", "retrieved_contexts": "passages",
           "contexts": "passages"}
"""A record's other names for its fields (RAGAS, and a ``contexts`` key) -> franq's name."""
FALLBACKS = {"question": ("input", "query"), "answer": ("output", "actual_output"),
             "passages": ("documents", "retrieval_context", "context")}
"""franq's field -> names read for it, in this order, only when it and its aliases are absent."""
FIELD_NAMES = {field: (field, *(a for a, n in ALIASES.items() if n == field), *FALLBACKS[field])
               for field in FALLBACKS}
"""Every name each field is read from, franq's first: what the framework adapters look up."""
DOCUMENT_DICTS = (("page_content", "metadata"), ("content", "meta"), ("text", "metadata"), ("text", "title"))
"""A passage dict's (text key, metadata key) forms: LangChain, Haystack, LlamaIndex, franq's own."""


class UnknownFields:
    """The unknown fields met in one batch: each record keeps its own in
    ``meta["unknown_fields"]``; this logs one line per batch naming them (a field met
    again in the same batch is not logged again)."""

    def __init__(self):
        self.seen: set[str] = set()

    def note(self, names) -> None:
        new = sorted(set(names) - self.seen)
        if new:
            self.seen.update(new)
            log.warning("unknown field(s) %s kept in each record's meta['unknown_fields'] "
                        "(strict mode refuses them)", new)


def canonical(obj: Mapping, where: str) -> dict:
    """``obj`` with its aliases renamed to franq's names; an alias given with its name is an
    error naming both (returned as a message: the caller raises its own error)."""
    out = dict(obj)
    for alias, name in ALIASES.items():
        if alias not in out:
            continue
        if name in out:
            given = name if name in obj else next(a for a, n in ALIASES.items() if n == name and a in obj)
            raise ValueError(f"{where}'{alias}' and '{given}' both given; they name the same field "
                             f"('{alias}' is read as '{name}'): give one")
        out[name] = out.pop(alias)
    for name, fallbacks in FALLBACKS.items():
        if name not in out and (found := next((f for f in fallbacks if f in out), None)) is not None:
            out[name] = out.pop(found)
    return out


def other_names(field: str) -> str:
    """`` (or 'user_input', ...)``: the other names ``field`` is read from, for a missing-field error."""
    names = FIELD_NAMES.get(field, (field,))[1:]
    return f" (or {', '.join(repr(n) for n in names)})" if names else ""


def jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def document_parts(p: Any) -> tuple[Any, Any, dict | None] | None:
    """``(text, title, extra)`` of a document object or dict form; None when ``p`` is none.
    ``extra``: its metadata other than the title (kept when it is JSON), or None."""
    if isinstance(p, Mapping):
        for text_key, meta_key in DOCUMENT_DICTS:
            if text_key in p and set(p) <= {text_key, meta_key}:
                if meta_key == "title":
                    return None  # franq's own form: read by the caller
                return _from_metadata(p[text_key], p.get(meta_key))
        return None
    if hasattr(p, "page_content"):  # LangChain Document
        return _from_metadata(p.page_content, getattr(p, "metadata", None))
    if hasattr(p, "content") and hasattr(p, "meta"):  # Haystack Document
        return _from_metadata(p.content, p.meta)
    if callable(getattr(p, "get_content", None)):  # LlamaIndex node (or NodeWithScore)
        return _from_metadata(p.get_content(), getattr(p, "metadata", None))
    if hasattr(p, "text") and hasattr(p, "metadata"):
        return _from_metadata(p.text, p.metadata)
    return None


def _from_metadata(text: Any, metadata: Any) -> tuple[Any, Any, dict | None]:
    if not isinstance(metadata, Mapping):
        return text, "", None
    title = metadata.get("title")
    title = title if isinstance(title, str) else ""
    rest = {str(k): v for k, v in metadata.items() if not (k == "title" and title)}
    return text, title, (rest if rest and jsonable(rest) else None)
