"""One line of ``franq score`` output, both ways: :func:`result_record` writes an :class:`~franq.types.AnswerScore`
(with the input's id and what the input carried besides) as a JSON object; :func:`read_results` reads such lines back
into ``AnswerScore`` objects, validating every field ("line 12: 'claims[0].status' must be one of [...], got 'ok'").

Every line says its output schema (``"schema": 2``, :data:`SCHEMA`). Lines of the previous schema (franq 0.1: no
``schema`` field) are read too, their renamed fields mapped onto today's (:func:`upgrade_previous`); CHANGELOG.md
lists every change. Fields added within schema 2 (``verdict_reason``, ``knowledge`` and its ``check_*``;
``p_all_true`` and ``weakest_claim``, recomputed on reading; ``calibrator.prior``) may be absent."""
from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from claims.types import Claim
from franq import files
from franq.errors import InputError, redact
from franq.io import CLAIM_LABELS, CONDITIONS, NUMERIC_LABELS, Example, parse_answer_labels
from franq.types import (ACTIONS, FORMS, SOURCES, STATUSES, VERDICT_BASES, VERDICTS, AnswerScore, CalibratorInfo,
                         ClaimScore, Decision, EvidenceWindow, KnowledgeTerm, Passage, Stack)
from franq.verdicts import answer_summary

SCHEMA = 2
"""The output schema :func:`result_record` writes; :func:`read_results` reads it and the one before."""
NUMBERS = ("p_faithful", "p_contradicted", "p_not_mentioned", "uq_faith", "uq_unfaith", "p_true_raw",
           "p_true_calibrated", "p_true_if_supported_calibrated", "p_true_if_contradicted_calibrated",
           "p_true_if_not_mentioned_calibrated", "p_true_if_unfaithful_calibrated", "p_faithful_calibrated")
"""A claim's numbers (null unless it was scored, or without a calibrator)."""


def result_record(example_id: str | None, result: AnswerScore, example: Example | None = None) -> dict:
    """One output line: the id, the result, and what the input carried besides: its
    passages (for reports), claim labels and ``meta`` (the user's own fields)."""
    record = {"schema": SCHEMA, "id": example_id, **dataclasses.asdict(result), **answer_summary(result)}
    record["stack"] = result.stack.to_dict()
    record["warnings"] = [redact(w) for w in record["warnings"]]
    for claim in record["claims"]:
        claim["claim"]["note"] = redact(claim["claim"]["note"])
    if example is not None:
        record["passages"] = [dataclasses.asdict(p) for p in example.passages]
        if example.claim_labels:
            for claim, labels in zip(record["claims"], example.claim_labels):
                claim.update(labels)
        if example.labels:
            record.update(example.labels)  # the record labels (franq.io.ANSWER_LABELS), passed through
        if example.meta is not None:
            record["meta"] = example.meta
    return record


@dataclass(frozen=True)
class ResultLine:
    """One output line read back: where it was (``"PATH line N"``), the input's id, the result, and what the input
    carried besides as an :class:`~franq.io.Example` (its ``passages``, ``claim_labels``, ``labels`` and ``meta``;
    None when the line carries none of them): ``result_record(id, result, example)`` writes the line again."""

    where: str
    id: str | None
    result: AnswerScore
    example: Example | None = None


@overload
def read_results(source: str | os.PathLike | Iterable[str | Mapping] | Mapping, *, with_input: Literal[False] = False,
                 on_skip: Callable[[str], None] | None = None, name: str = "") -> Iterator[AnswerScore]: ...
@overload
def read_results(source: str | os.PathLike | Iterable[str | Mapping] | Mapping, *, with_input: Literal[True],
                 on_skip: Callable[[str], None] | None = None, name: str = "") -> Iterator[ResultLine]: ...
def read_results(source, *, with_input=False, on_skip=None, name=""):
    """The results of ``franq score`` output, in order: ``source`` is a file's path, its lines (strings, or objects
    already parsed) or one record. ``with_input``: yield :class:`ResultLine` (the result, its location and the
    input it carried) instead of the bare results.

    Blank lines are skipped. Any other line that is not a valid result (broken JSON, an error record, a wrong field)
    raises :class:`~franq.errors.InputError` naming the line and the field, or, with ``on_skip``, is passed to it
    as ``"WHERE: reason"`` and skipped. ``name`` names the source in messages (default: the path; nothing for
    lines; "record" for one record)."""
    if isinstance(source, (str, os.PathLike)):
        return _read_file(Path(source), with_input, on_skip, name or str(source))
    if isinstance(source, Mapping):  # one record (e.g. a request's body)
        return _read_lines([source], with_input, on_skip, name or "record", numbered=False)
    return _read_lines(source, with_input, on_skip, name)


def _read_file(path: Path, with_input: bool, on_skip, name: str) -> Iterator:
    """Lines of a file read within franq's limits (:func:`franq.files.iter_lines`: no devices, each line at most
    ``record_bytes``, UTF-8); a line that fails those is an error like any bad line (skipped with ``on_skip``)."""
    for n, text, error in files.iter_lines(path, what="input"):
        if not error:
            yield from _read_lines([text], with_input, on_skip, f"{name} line {n}", numbered=False)
        elif on_skip is None:
            raise InputError(f"{name} line {n}: {error}")
        else:
            on_skip(f"{name} line {n}: {error}")


def _read_lines(lines: Iterable[str | Mapping], with_input: bool, on_skip, name: str, *,
                numbered: bool = True) -> Iterator:
    for n, line in enumerate(lines, 1):
        where = name if not numbered else f"{name} line {n}" if name else f"line {n}"
        try:
            if isinstance(line, Mapping):
                obj = line
            elif not line.strip():
                continue
            else:
                obj = files.load_json(line, where)
            read = parse_result(obj, where)
        except InputError as exc:
            if on_skip is None:
                raise
            on_skip(str(exc))
            continue
        yield read if with_input else read.result


# ---------------------------------------------------------------------------- one record
def parse_result(obj: Any, where: str = "") -> ResultLine:
    """Validate one output record (a parsed JSON object) into a :class:`ResultLine`."""
    if not isinstance(obj, Mapping):
        raise InputError(f"{_at(where)}expected a JSON object, got {_type(obj)}")
    if "error" in obj and "claims" not in obj:
        raise InputError(f"{_at(where)}an error record, not a result")
    if not isinstance(obj.get("claims"), (list, tuple)) or "answer" not in obj:
        raise InputError(f"{_at(where)}not a franq result record (no 'answer' and 'claims')")
    obj = upgrade(obj, where)
    f = _Fields(obj, where)
    claims, claim_labels = [], []
    for i, c in enumerate(obj["claims"]):
        score, labels = _claim_score(_Fields(c, where, f"claims[{i}]"))
        claims.append(score)
        claim_labels.append(labels)
    result = AnswerScore(
        question=f.text("question"), answer=f.text("answer"), claims=tuple(claims), mode=f.choice("mode", FORMS),
        stack=_stack(f), calibrator=_calibrator(f.nested("calibrator")),
        warnings=tuple(f.texts("warnings")), decision=_decision(f.nested("decision")))
    ident = obj.get("id")
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, (str, int))):
        raise InputError(f"{_at(where)}'id' must be a string, an integer or null, got {_type(ident)}")
    if obj.get("meta") is not None and not isinstance(obj["meta"], Mapping):
        raise InputError(f"{_at(where)}'meta' must be an object or null, got {_type(obj['meta'])}")
    ident = None if ident is None else str(ident)
    labels = parse_answer_labels(obj, where) or None
    if "passages" not in obj and not any(claim_labels) and labels is None and obj.get("meta") is None:
        return ResultLine(where, ident, result)  # written without its input
    example = Example(result.question, _passages(f), result.scored_answer, id=ident, labels=labels, meta=obj.get("meta"),
                      claim_labels=tuple(claim_labels) if any(claim_labels) else None)
    return ResultLine(where, ident, result, example)


PREVIOUS = 1
"""The schema before :data:`SCHEMA` (franq 0.1 and before), whose lines carry no ``schema`` field."""
RENAMED = {"p_true_if_faithful_calibrated": "p_true_if_supported_calibrated"}
"""A claim's fields renamed since the previous schema (old -> new)."""
DROPPED = ("model", "faithfulness", "calibration")
"""An answer's fields of the previous schema that repeated ``stack`` or ``calibrator.variant``."""
OLD_DERIVED = ("p_faithful_raw", "p_true_raw", "claim_prob", "parametric", "semantic_entropy", "eigval", "n_samples")
"""Keys of the oldest lines' ``components`` that were derived values, not scorer signals."""


def upgrade(obj: Mapping, where: str = "") -> Mapping:
    """``obj`` (an output line with its ``claims``) in the current schema. A line of the previous one (no ``schema``)
    loses ``p_supported`` (= ``p_faithful``), ``model``, ``faithfulness``, ``calibration`` (= ``stack`` and
    ``calibrator.variant``) and gets :data:`RENAMED`; its ``p_true_if_unfaithful_calibrated`` is
    ``p_true_if_not_mentioned_calibrated`` where a three-condition calibrator wrote it (with
    ``p_true_if_contradicted_calibrated``). The oldest lines (no ``stack``, signals under ``components``) are read
    as before."""
    schema = obj.get("schema", PREVIOUS)
    if schema == SCHEMA and _is_int(schema):
        return obj
    if schema != PREVIOUS or not _is_int(schema):
        raise InputError(f"{_at(where)}'schema' must be {SCHEMA} (or absent: franq 0.1 output), got "
                         f"{schema!r:.40}: written by a newer franq?")
    out = {k: v for k, v in obj.items() if k not in DROPPED}
    if not obj.get("stack"):  # the oldest lines: the preset's default scorers
        from franq.config import UQConfig

        f = _Fields(obj, where)
        mode = f.choice("mode", FORMS)
        scorers = getattr(UQConfig(), mode)
        out["stack"] = Stack.build(model=f.text("model"), faithfulness=f.text("faithfulness"), uq_faith=scorers.faith,
                                   uq_unfaith=scorers.unfaith, mode=mode).to_dict()
    out["claims"] = [_upgrade_claim(c, where, f"claims[{i}]") for i, c in enumerate(obj["claims"])]
    return out


def _upgrade_claim(c: Any, where: str, path: str) -> Any:
    if not isinstance(c, Mapping):
        return c  # the field checks name it
    out = {RENAMED.get(k, k): v for k, v in c.items() if k not in ("p_supported", "components")}
    if out.get("p_faithful") is None and c.get("p_supported") is not None:
        out["p_faithful"] = c["p_supported"]
    if c.get("p_true_if_contradicted_calibrated") is not None:  # three-condition: it meant P(true | not mentioned)
        out["p_true_if_not_mentioned_calibrated"] = out.pop("p_true_if_unfaithful_calibrated", None)
    if "components" in c and "signals" not in c:  # the oldest: signals beside derived values
        components = _Fields(c, where, path).numbers("components")
        out["signals"] = {k: v for k, v in components.items() if k not in OLD_DERIVED}
        for key, old in (("p_faithful", "p_faithful_raw"), ("p_true_raw", "p_true_raw")):
            if components.get(old) is not None:  # p_faithful could be calibrated then
                out[key] = components[old]
    return out


def _claim_score(c: _Fields) -> tuple[ClaimScore, dict]:
    claim = c.nested("claim", required=True)
    spans = claim.list("char_spans")
    for k, s in enumerate(spans):
        if not (isinstance(s, (list, tuple)) and len(s) == 2 and all(_is_int(x) for x in s)):
            raise claim.error(f"char_spans[{k}]", "a [start, end] pair of integers", s)
    status = c.choice("status", STATUSES)
    values = {k: c.probability(k) for k in NUMBERS}
    signals = c.numbers("signals")
    labels = {}
    for key in CLAIM_LABELS:
        if key in c.obj:
            labels[key] = c.flag(key)
    if "condition" in c.obj:
        labels["condition"] = c.choice("condition", CONDITIONS, null=True)
    for key in NUMERIC_LABELS:
        if key in c.obj:
            v = c.number(key)
            if v is not None and not (math.isfinite(v) and v >= 0):
                raise c.error(key, "a number >= 0 or null", v)
            labels[key] = c.obj[key]
    return ClaimScore(
        Claim(claim.text("text", empty=True), tuple((int(s), int(e)) for s, e in spans),
              token_positions=tuple(claim.ints("token_positions")), token_ids=tuple(claim.ints("token_ids")),
              sentence=claim.int("sentence", default=0), check_worthy=claim.flag("check_worthy", default=True),
              note=claim.text("note", default=None, null=True, empty=True)),
        status, **values, signals=signals, verdict=c.choice("verdict", VERDICTS, null=True),
        evidence_window=_window(c.nested("evidence_window")), verdict_reason=c.text("verdict_reason", default=None),
        verdict_basis=c.choice("verdict_basis", VERDICT_BASES, null=True), knowledge=_knowledge(c.nested("knowledge"))
    ), labels


def _knowledge(k: _Fields | None) -> KnowledgeTerm | None:
    return None if k is None else KnowledgeTerm(**{f.name: k.probability(f.name, null=f.name != "p_true")
                                                   for f in dataclasses.fields(KnowledgeTerm)})


def _window(w: _Fields | None) -> EvidenceWindow | None:
    return None if w is None else EvidenceWindow(passage=w.int("passage"), start=w.int("start"), end=w.int("end"),
                                                 text=w.text("text"))


def _stack(f: _Fields) -> Stack:
    stack = f.obj.get("stack")
    s = f.nested("stack", required=True)
    missing = [k for k in ("model", "faithfulness", "uq_faith", "uq_unfaith", "prompt_version", "mode")
               if k not in stack]
    if missing:
        raise InputError(f"{_at(f.where)}'stack' has no {missing}")
    return Stack.from_dict({k: s.text(k, empty=True) for k in stack})


def _calibrator(c: _Fields | None) -> CalibratorInfo | None:
    if c is None:
        return None
    fitted = c.nested("fitted_for", required=True)
    return CalibratorInfo(path=c.text("path"), source=c.choice("source", SOURCES), variant=c.text("variant"),
                          fitted_for={k: fitted.text(k, empty=True) for k in fitted.obj}, prior=c.probability("prior"))


def _decision(d: _Fields | None) -> Decision | None:
    return None if d is None else Decision(
        action=d.choice("action", ACTIONS), answer=d.text("answer", null=True, empty=True), verify=d.text("verify"),
        score=d.number("score", null=False), threshold=d.number("threshold", null=False), fallback=d.text("fallback"),
        fallback_answer=d.text("fallback_answer", default=None, null=True, empty=True),
        policy=d.text("policy", default=None, null=True), rejected_answer=d.text("rejected_answer", default=None))


def _passages(f: _Fields) -> tuple[Passage, ...]:
    out = []
    for i, p in enumerate(f.list("passages", default=[])):
        if isinstance(p, str):
            out.append(Passage(p))
        elif isinstance(p, Mapping) and isinstance(p.get("text"), str) and isinstance(p.get("title", ""), str):
            out.append(Passage(p["text"], p.get("title", "")))
        else:
            raise f.error(f"passages[{i}]", "a string or a {'title', 'text'} object", p)
    return tuple(out)


# ---------------------------------------------------------------------------- field checks
_MISSING = object()


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def _type(v: Any) -> str:
    return "null" if v is None else type(v).__name__


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class _Fields:
    """Typed reads of one JSON object's fields; errors name the line and the field path."""

    def __init__(self, obj: Any, where: str, path: str = ""):
        if not isinstance(obj, Mapping):
            raise InputError(f"{_at(where)}'{path}' must be an object, got {_type(obj)}")
        self.obj, self.where, self.path = obj, where, path

    def error(self, key: str, expected: str, got: Any) -> InputError:
        name = f"{self.path}.{key}" if self.path and not key.startswith("[") else f"{self.path}{key}"
        shown = repr(got) if isinstance(got, str) else _type(got)
        return InputError(f"{_at(self.where)}'{name}' must be {expected}, got {shown}")

    def _get(self, key: str, default: Any) -> Any:
        v = self.obj.get(key, _MISSING)
        if v is _MISSING:
            if default is _MISSING:
                raise InputError(f"{_at(self.where)}missing field '{self.path + '.' if self.path else ''}{key}'")
            return default
        return v

    def text(self, key: str, *, default: Any = _MISSING, null: bool = False, empty: bool = True) -> Any:
        v = self._get(key, default)
        if v is None and (null or default is None):
            return None
        if not isinstance(v, str) or (not empty and not v.strip()):
            raise self.error(key, "a string" + (" or null" if null else ""), v)
        return v

    def choice(self, key: str, allowed: tuple[str, ...], *, null: bool = False) -> Any:
        v = self._get(key, None if null else _MISSING)
        if v is None and null:
            return None
        if v not in allowed:
            raise self.error(key, f"one of {list(allowed)}" + (" or null" if null else ""), v)
        return v

    def number(self, key: str, *, null: bool = True) -> float | None:
        v = self._get(key, None if null else _MISSING)
        if v is None and null:
            return None
        if not _is_number(v):
            raise self.error(key, "a number" + (" or null" if null else ""), v)
        return float(v)

    def probability(self, key: str, *, null: bool = True) -> float | None:
        v = self.number(key, null=null)
        if v is not None and not 0.0 <= v <= 1.0:
            raise self.error(key, "a probability in [0, 1]" + (" or null" if null else ""), v)
        return v

    def int(self, key: str, *, default: Any = _MISSING) -> int:
        v = self._get(key, default)
        if not _is_int(v):
            raise self.error(key, "an integer", v)
        return v

    def flag(self, key: str, *, default: Any = None) -> bool | None:
        v = self._get(key, default)
        if v is not None and not isinstance(v, bool):
            raise self.error(key, "true, false or null", v)
        return v

    def list(self, key: str, *, default: Any = _MISSING) -> list:
        v = self._get(key, default)
        if not isinstance(v, (list, tuple)):  # tuples: a record from result_record, not yet JSON
            raise self.error(key, "a list", v)
        return v

    def ints(self, key: str) -> list[int]:
        v = self.list(key, default=[])
        bad = next((x for x in v if not _is_int(x)), _MISSING)
        if bad is not _MISSING:
            raise self.error(key, "a list of integers", bad)
        return v

    def texts(self, key: str) -> list[str]:
        v = self.list(key, default=[])
        if not all(isinstance(x, str) for x in v):
            raise self.error(key, "a list of strings", v)
        return v

    def numbers(self, key: str) -> dict[str, float | None]:
        v = self._get(key, {})
        if not isinstance(v, Mapping) or not all(x is None or _is_number(x) for x in v.values()):
            raise self.error(key, "an object of numbers", v)
        return {k: None if x is None else float(x) for k, x in v.items()}

    def nested(self, key: str, *, required: bool = False) -> _Fields | None:
        v = self._get(key, _MISSING if required else None)
        if v is None and not required:
            return None
        return _Fields(v, self.where, f"{self.path}.{key}" if self.path else key)
