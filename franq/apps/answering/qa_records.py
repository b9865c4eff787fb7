"""JSONL records for the answering applications (``franq sufficiency``).

A record is ``{"id"?, "question", "passages", "answer"?, "gold_answers"?, "gold_passages"?,
"sufficient"?}``. Unknown fields are an error naming them, unless ``pass_through`` is
set: then they are copied to the output line unchanged. A bad record becomes an error
line (line number, id, reason) and the file carries on.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from franq.apps.answering.items import QAItem
from franq import InputError
from franq.io import ANSWER_LABELS, iter_lines, load_json, parse_answer_labels, parse_passages, parse_text

FIELDS = {"id", "question", "passages", "answer", *ANSWER_LABELS}


@dataclass(frozen=True)
class QARecord:
    line: int
    id: str | None
    item: QAItem | None
    keep: dict  # what goes to the output besides the result: labels and passed-through fields
    error: str | None = None


def parse_qa_record(obj, where: str, *, pass_through: bool = False) -> tuple[QAItem, dict]:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    unknown = set(obj) - FIELDS
    if unknown and not pass_through:
        raise InputError(f"{where}: unknown field(s) {sorted(unknown)}; expected {sorted(FIELDS)} "
                         "(--pass-through copies other fields to the output)")
    for f in ("question", "passages"):
        if f not in obj:
            raise InputError(f"{where}: missing field '{f}'")
    labels = parse_answer_labels(obj, where)
    answer = obj.get("answer")
    item = QAItem(parse_text(obj["question"], "question", where), parse_passages(obj["passages"], where),
                  answer=None if answer is None else parse_text(answer, "answer", where),
                  gold_answers=tuple(labels.get("gold_answers", ())))
    return item, {**{k: obj[k] for k in unknown}, **labels}


def read_qa_records(path: str, *, pass_through: bool = False) -> Iterator[QARecord]:
    """Each non-blank line of ``path`` as a :class:`QARecord` (``error`` set when bad). The
    file is read within franq's limits (:func:`franq.io.iter_lines`): a line over
    ``record_bytes`` or not valid UTF-8 is a bad record; a device is refused."""
    for n, line, error in iter_lines(path, what="input"):
        where = f"line {n}"
        if error:
            yield QARecord(n, None, None, {}, f"{where}: {error}")
            continue
        if not line.strip():
            continue
        ident = None
        try:
            obj = load_json(line, where)
            if isinstance(obj, dict) and obj.get("id") is not None:
                ident = str(obj["id"])
            item, keep = parse_qa_record(obj, where, pass_through=pass_through)
        except InputError as exc:
            yield QARecord(n, ident, None, {}, str(exc))
            continue
        yield QARecord(n, ident, item, keep)
