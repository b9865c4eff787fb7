"""Validation of user input at the public boundary (API, JSON and JSONL readers).

Every error is an :class:`~franq.errors.InputError` that names the field, what was
expected and what arrived, e.g. ``"line 12: 'passages' must be a list, got dict"``.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from franq import files
from franq import io_forms as forms
from franq.errors import InputError, redact
from franq.limits import LIMITS, LimitError, check, check_example
from franq.files import (
    DuplicateKeyError, atomic_open, atomic_write, check_outputs, iter_lines, no_duplicate_keys, read_json_file,
    read_jsonl, read_text,
)
from franq.types import Passage

ANSWER_LABELS = ("gold_answers", "gold_passages", "sufficient", "is_true", "is_faithful")
"""Optional labels of a whole record (answering with faithfulness, sufficient context; a
short answer's truth and support, which label its one claim where a short preset reads it
whole): validated, kept on :attr:`Example.labels` and passed through to the output."""
FILE_BOUNDARY = (atomic_open, atomic_write, check_outputs, iter_lines, read_json_file, read_jsonl, read_text,
                 DuplicateKeyError, no_duplicate_keys, LIMITS, LimitError)
"""The file boundary (:mod:`franq.files`) and the table of limits (:mod:`franq.limits`),
here for the applications: ``franq.io`` is their extension surface."""
UnknownFields = forms.UnknownFields
"""The unknown fields met in one batch (:mod:`franq.io_forms`), for the applications' readers."""
FIELD_NAMES = forms.FIELD_NAMES
"""Every name a record's question, answer and passages are read from (:mod:`franq.io_forms`),
for the framework adapters."""
KNOWN_FIELDS = {"id", "question", "passages", "answer", "claims", "meta", *ANSWER_LABELS}


@dataclass(frozen=True)
class Example:
    question: str
    passages: tuple[Passage, ...]
    answer: str
    id: str | None = None
    claims: tuple[str, ...] | None = None
    claim_labels: tuple[dict, ...] | None = None
    """Per claim, the labels given with it (``is_true``, ``is_faithful``), passed through."""
    labels: dict | None = None
    """The record's ``gold_answers`` / ``gold_passages`` / ``sufficient``, when given (validated)."""
    meta: dict | None = None
    """The user's own fields (request id, user, timestamp...): not read, echoed to the output."""

    @classmethod
    def from_dict(cls, obj: Any, where: str = "") -> Example:
        """Validate a dict ``{"question", "passages", "answer", "claims"?, "id"?, "meta"?}``
        as a JSONL line is validated; errors name ``where`` and the field."""
        return parse_example(obj, where)

    def stable_id(self) -> str:
        """The given id, or a content hash so reruns give the same id."""
        if self.id is not None:
            return self.id
        blob = json.dumps([self.question, [(p.title, p.text) for p in self.passages], self.answer],
                          ensure_ascii=False)
        return "sha1:" + hashlib.sha1(blob.encode()).hexdigest()[:16]


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def _type(v: Any) -> str:
    return type(v).__name__


def parse_text(value: Any, field: str, where: str = "", *, allow_empty: bool = False) -> str:
    """A text field: a string, not empty (unless ``allow_empty``), valid Unicode (an
    unpaired surrogate such as ``"\\ud800"`` is refused). Control characters are kept as
    given (nothing a user gave is changed); franq escapes them wherever it prints text."""
    if not isinstance(value, str):
        raise InputError(f"{_prefix(where)}'{field}' must be a string, got {_type(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{_prefix(where)}'{field}' holds an unpaired surrogate at character {exc.start} "
                         f"(not valid Unicode)") from None
    if not allow_empty and not value.strip():
        raise InputError(f"{_prefix(where)}'{field}' is empty")
    return value


def parse_passages(value: Any, where: str = "", *, strict: bool = False) -> tuple[Passage, ...]:
    """Accept a list of strings, ``{"title", "text"}`` objects, :class:`Passage`, or documents
    as RAG frameworks write them (LangChain, LlamaIndex, Haystack objects and their dict forms;
    :mod:`franq.io_forms`). An empty list is an answer whose retrieval returned nothing: it is
    scored closed-book (nothing supports a claim, so P_faithful = 0 and P(true) is UQ_unfaith,
    from p(c|x))."""
    return read_passages(value, where, strict=strict)[0]


def read_passages(value: Any, where: str = "", *, strict: bool = False
                  ) -> tuple[tuple[Passage, ...], dict[str, dict]]:
    """:func:`parse_passages`, and what each passage carried besides its text and title
    (a document's metadata; unknown keys of a ``{"title", "text"}`` object unless ``strict``),
    by passage index as a string: what :func:`parse_example` keeps in ``meta["passage_metadata"]``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InputError(f"{_prefix(where)}'passages' must be a list of strings or "
                         f"{{'title', 'text'}} objects, got {_type(value)}")
    out, extras = [], {}
    for i, p in enumerate(value):
        field = f"passages[{i}]"
        doc = None if isinstance(p, (Passage, str)) else forms.document_parts(p)
        if isinstance(p, Passage):
            out.append(p)
        elif isinstance(p, str):
            out.append(Passage(parse_text(p, field, where)))
        elif doc is not None:
            text, title, extra = doc
            out.append(Passage(parse_text(text, f"{field}.text", where),
                               parse_text(title, f"{field}.title", where, allow_empty=True)))
            if extra:
                extras[str(i)] = extra
        elif isinstance(p, Mapping):
            extra = set(p) - {"title", "text"}
            if extra and strict:
                raise InputError(f"{_prefix(where)}'{field}' has unknown keys {sorted(extra)}; "
                                 f"expected 'title' and 'text'")
            if "text" not in p:
                raise InputError(f"{_prefix(where)}'{field}' has no 'text' (or 'page_content', 'content')")
            title = p.get("title") or ""
            out.append(Passage(parse_text(p["text"], f"{field}.text", where),
                               parse_text(title, f"{field}.title", where, allow_empty=True)))
            if extra:
                extras[str(i)] = {k: p[k] for k in sorted(extra)}
        else:
            raise InputError(f"{_prefix(where)}'{field}' must be a string or a {{'title', 'text'}} object or a "
                             f"document (page_content, content or get_content()), got {_type(p)}")
    return tuple(out), extras


CLAIM_LABELS = ("is_true", "is_faithful", "synthetic")
"""A claim's true / false labels. ``synthetic``: the claim was made by editing another (a
corruption you generated), not written by the answerer; a calibrator's knowledge check
(:mod:`calibration.knowledge_check`) reads natural claims only."""
CONDITIONS = ("supported", "contradicted", "not_mentioned")
"""A claim's optional ``condition`` label: what its passages do with it (what a
three-condition calibrator fits each map on). It agrees with ``is_faithful`` where both are
given: supported is faithful, contradicted and not mentioned are not."""
NUMERIC_LABELS = ("semantic_entropy",)
"""A claim's numeric labels: ``semantic_entropy`` (>= 0) of a whole short answer, what
``franq fit probe`` fits a semantic entropy probe on."""


def parse_claims(value: Any, where: str = "", *, limits: Mapping[str, int] | None = None
                 ) -> tuple[tuple[str, ...], tuple[dict, ...]] | None:
    """Claims given with an example: strings, or ``{"text", "is_true"?, "is_faithful"?, "condition"?,
    "synthetic"?}`` objects whose labels (true, false or null) are kept and passed through to the output.
    At most ``limits["claims"]`` claims of ``limits["claim_chars"]`` characters (:mod:`franq.limits`)."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InputError(f"{_prefix(where)}'claims' must be a list of strings or {{'text', "
                         f"'is_true', 'is_faithful', ...}} objects, got {_type(value)}")
    check("claims", len(value), where=where, subject="'claims'", limits=limits)  # before reading them
    texts, labels = [], []
    for i, c in enumerate(value):
        field = f"claims[{i}]"
        if isinstance(c, Mapping):
            extra = set(c) - {"text", *CLAIM_LABELS, "condition", *NUMERIC_LABELS}
            if extra:
                raise InputError(f"{_prefix(where)}'{field}' has unknown keys {sorted(extra)}; "
                                 f"expected 'text', 'is_true', 'is_faithful', 'condition', 'synthetic', "
                                 f"'semantic_entropy'")
            if "text" not in c:
                raise InputError(f"{_prefix(where)}'{field}' has no 'text'")
            for key in CLAIM_LABELS:
                if c.get(key) is not None and not isinstance(c[key], bool):
                    raise InputError(f"{_prefix(where)}'{field}.{key}' must be true, false or null, "
                                     f"got {_type(c[key])}")
            _check_condition(c, field, where)
            for key in NUMERIC_LABELS:
                v = c.get(key)
                if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                      or not math.isfinite(v) or v < 0):
                    raise InputError(f"{_prefix(where)}'{field}.{key}' must be a number >= 0 or null, "
                                     f"got {v!r}")
            texts.append(parse_text(c["text"], f"{field}.text", where))
            labels.append({k: c[k] for k in (*CLAIM_LABELS, "condition", *NUMERIC_LABELS) if k in c})
        else:
            texts.append(parse_text(c, field, where))
            labels.append({})
        check("claim_chars", len(texts[-1]), where=where, subject=f"'{field}'", limits=limits)
    return tuple(texts), tuple(labels)


def _check_condition(c: Mapping, field: str, where: str) -> None:
    cond = c.get("condition")
    if cond is None:
        return
    if cond not in CONDITIONS:
        raise InputError(f"{_prefix(where)}'{field}.condition' must be one of {', '.join(CONDITIONS)} or null, "
                         f"got {cond!r}")
    faithful = c.get("is_faithful")
    if faithful is not None and faithful != (cond == "supported"):
        raise InputError(f"{_prefix(where)}'{field}': 'condition' {cond!r} disagrees with 'is_faithful' "
                         f"{str(faithful).lower()} (supported is faithful; contradicted and not_mentioned are not)")


def parse_answer_labels(obj: Mapping, where: str = "") -> dict:
    """The optional record labels: ``gold_answers`` (a list of non-empty strings),
    ``gold_passages`` (passages, as ``passages``), ``sufficient``, ``is_true`` and
    ``is_faithful`` (true, false or null).
    Returns the given ones, validated (JSON-ready: passages as ``{"title", "text"}``)."""
    out: dict = {}
    if obj.get("gold_answers") is not None:
        g = obj["gold_answers"]
        if isinstance(g, str) or not isinstance(g, Sequence):
            raise InputError(f"{_prefix(where)}'gold_answers' must be a list of strings, got {_type(g)}")
        out["gold_answers"] = [parse_text(a, f"gold_answers[{i}]", where) for i, a in enumerate(g)]
    if obj.get("gold_passages") is not None:
        try:
            passages = parse_passages(obj["gold_passages"], where)
        except InputError as exc:
            raise InputError(str(exc).replace("'passages", "'gold_passages")) from None
        if not passages:  # "passages": [] is an answer retrieval found nothing for; gold ones are given
            raise InputError(f"{_prefix(where)}'gold_passages' is an empty list; leave it out (or null) for none")
        out["gold_passages"] = [{"title": p.title, "text": p.text} for p in passages]
    for key in ("sufficient", "is_true", "is_faithful"):
        if key in obj:
            v = obj[key]
            if v is not None and not isinstance(v, bool):
                raise InputError(f"{_prefix(where)}'{key}' must be true, false or null, got {_type(v)}")
            out[key] = v
    return out


def parse_example(obj: Any, where: str = "", *, limits: Mapping[str, int] | None = None, strict: bool = False,
                  unknown: forms.UnknownFields | None = None) -> Example:
    """Validate one JSON object ``{"id", "question", "passages", "answer", "claims"?}``,
    within ``limits`` (:mod:`franq.limits`; the defaults when None): a list of passages or
    claims over its limit is refused before its items are read. RAGAS names and a
    ``contexts`` key are read as franq's (:data:`franq.io_forms.ALIASES`). Unknown fields are
    kept in ``meta["unknown_fields"]`` (``query``, ``documents`` and the other
    :data:`~franq.io_forms.FALLBACKS` are read where franq's name is missing) and named once per batch (``unknown``: the batch's
    :class:`~franq.io_forms.UnknownFields`); ``strict`` refuses them, as before 0.3."""
    if not isinstance(obj, Mapping):
        raise InputError(f"{_prefix(where)}expected a JSON object, got {_type(obj)}")
    obj = aliased(obj, where)
    extra = set(obj) - KNOWN_FIELDS
    if extra and strict:
        raise InputError(f"{_prefix(where)}unknown field(s) {sorted(extra)}; expected {sorted(KNOWN_FIELDS)} "
                         f"(put your own fields in 'meta': an object echoed to the output)")
    meta = obj.get("meta")
    if meta is not None and not isinstance(meta, Mapping):
        raise InputError(f"{_prefix(where)}'meta' must be a JSON object, got {_type(meta)}")
    for field in ("question", "passages", "answer"):
        if field not in obj:
            raise InputError(f"{_prefix(where)}missing field '{field}'{forms.other_names(field)}")
    ident = obj.get("id")
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, (str, int))):
        raise InputError(f"{_prefix(where)}'id' must be a string or an integer, got {_type(ident)}")
    if isinstance(obj["passages"], Sequence) and not isinstance(obj["passages"], (str, bytes)):
        check("passages", len(obj["passages"]), where=where, subject="'passages'", limits=limits)
    claims = parse_claims(obj.get("claims"), where, limits=limits)
    labels = parse_answer_labels(obj, where)
    passages, passage_extra = read_passages(obj["passages"], where, strict=strict)
    meta = _kept(meta, {k: obj[k] for k in sorted(extra)}, passage_extra, unknown)
    return check_example(Example(
        question=parse_text(obj["question"], "question", where),
        passages=passages,
        answer=parse_text(obj["answer"], "answer", where),
        id=None if ident is None else str(ident),
        claims=claims[0] if claims else None,
        claim_labels=claims[1] if claims else None,
        labels=labels or None,
        meta=meta,
    ), limits=limits, where=where, claims=False)  # the claims were checked as they were read


def aliased(obj: Any, where: str = "") -> Any:
    """A record with its aliases (:data:`franq.io_forms.ALIASES`) renamed to franq's field
    names; an alias given with its name is an error naming both. Not a dict: as given."""
    if not isinstance(obj, Mapping):
        return obj
    try:
        return forms.canonical(obj, _prefix(where))
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _kept(meta: Mapping | None, fields: dict, passage_extra: dict, unknown: forms.UnknownFields | None
          ) -> dict | None:
    """The record's ``meta`` with what it gave beyond franq's fields: ``unknown_fields``
    (unknown record fields) and ``passage_metadata`` (documents' metadata, by passage index)."""
    if not fields and not passage_extra:
        return None if meta is None else dict(meta)
    out = dict(meta or {})
    if fields:
        fields = {redact(k): v for k, v in fields.items()}  # a secret given as a field name is masked
        out["unknown_fields"] = fields
        (unknown or forms.UnknownFields()).note(fields)
    if passage_extra:
        out["passage_metadata"] = passage_extra
    return out


def as_examples(examples: Any, *, limits: Mapping[str, int] | None = None, strict: bool = False) -> list[Example]:
    """Examples from :class:`Example` objects, dicts (validated like JSONL lines, errors
    naming ``examples[i]``) or a pandas DataFrame with those columns (one per row); each
    within ``limits`` (:mod:`franq.limits`); ``strict``: unknown fields refused (:func:`parse_example`)."""
    if hasattr(examples, "to_dict") and hasattr(examples, "columns"):  # a pandas DataFrame, without importing pandas
        rows = examples.to_dict(orient="records")
        examples = [{k: _plain(v) for k, v in row.items() if not _is_missing(v)} for row in rows]
    if isinstance(examples, (str, bytes, Mapping)):
        raise InputError(f"examples: expected a list of examples (Example objects or dicts), got {_type(examples)}")
    out, unknown = [], forms.UnknownFields()
    for i, ex in enumerate(examples):
        if isinstance(ex, Example):
            out.append(check_example(ex, limits=limits, where=f"examples[{i}]"))
        elif isinstance(ex, Mapping):
            out.append(parse_example(ex, f"examples[{i}]", limits=limits, strict=strict, unknown=unknown))
        else:
            raise InputError(f"examples[{i}]: expected an Example or a dict, got {_type(ex)}")
    return out


def _plain(value: Any) -> Any:
    """numpy arrays and scalars in a DataFrame cell -> lists and Python numbers."""
    return value.tolist() if hasattr(value, "tolist") and not isinstance(value, (str, bytes)) else value


def _is_missing(value: Any) -> bool:
    """A DataFrame cell left empty (None or NaN) is a field not given."""
    return value is None or (isinstance(value, float) and value != value)


def load_json(text: str, where: str, *, limits=None) -> Any:
    """Strict JSON (NaN, Infinity and ``1e999`` refused, no repeated key, nesting within the
    ``json_depth`` limit); errors name ``where`` (:func:`franq.files.load_json`)."""
    return files.load_json(text, where, limits=limits)


# ---------------------------------------------------------------------------- output lines
def record_json(record: dict) -> str:
    """One output line: ``record`` as strict JSON. A NaN or an infinity (which JSON has no
    word for, and which ``franq report`` would refuse) is an :class:`InputError` naming the
    field, never written (issue 47)."""
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False)
    except ValueError:
        raise InputError(f"the result holds a non-finite number at '{_non_finite(record)}' (NaN or an "
                         f"infinity, which JSON cannot hold); not written") from None


def _non_finite(value, path: str = "") -> str:
    """The path of the first NaN or infinity in ``value`` (``claims[2].p_true``)."""
    stack = [(value, path)]
    while stack:
        value, path = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return path or "(top)"
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(value.items())))
        elif isinstance(value, (list, tuple)):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(value))))
    return "?"
