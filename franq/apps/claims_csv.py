"""The CSV view of scored answers (``franq report --csv``, ``franq score --format csv``):
one row per claim, from results read back by ``franq.read_results(..., with_input=True)``
or bare ``AnswerScore`` objects (the HTML view is :mod:`franq.apps.render`).

Formula injection: a spreadsheet reads a cell that starts with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return as a formula, and a claim, an answer's id or a ``meta`` field
can be anything. As OWASP recommends, such a text cell is written with a single quote in
front (``'=1+2``), which the spreadsheet shows as the text; a text that is a plain number
(``-0.5``) and the numeric columns are written as they are. ``raw=True`` (``--raw-csv``)
writes every cell as given, for programs that read the CSV back.
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable

from franq import claim_p_true, with_verdicts
from franq.apps.render import as_lines

VALUES = ("p_true_calibrated", "p_true_raw", "p_faithful", "uq_faith", "uq_unfaith", "p_true_if_supported_calibrated",
          "p_true_if_unfaithful_calibrated", "p_faithful_calibrated", "p_contradicted", "p_not_mentioned",
          "p_true_if_contradicted_calibrated", "p_true_if_not_mentioned_calibrated")
"""A claim's numbers, as ``ClaimScore`` names them."""
LABELS = ("is_true", "is_faithful")
"""The claim labels the input carried (empty when it had none)."""
SCORED_BY = ("uq_faith_scorer", "uq_unfaith_scorer", "faithfulness_backend", "calibrator")
"""What produced each row's numbers: the scorer pair, the faithfulness backend, the calibrator file (or "uncalibrated")."""
ANSWER_COLUMNS = ("answer_p_all_true", "weakest")
"""The answer's P(every claim true) on each of its rows, and whether this row is its weakest claim."""
CLAIM_COLUMNS = ("status", "note", "verdict", "verdict_reason", "p_true", *VALUES, *LABELS, *SCORED_BY,
                 *ANSWER_COLUMNS)


def csv_rows(results: Iterable, *, threshold: float | None = None) -> tuple[list[str], list[dict]]:
    """One row per claim: ``id``, ``claim_index``, ``text``, the status and every value
    (``p_true`` is the calibrated value when present, else the raw mix), what produced them
    (:data:`SCORED_BY`), then each raw signal as ``signal.<name>`` and each ``meta`` field
    as ``meta.<key>``. ``threshold``: the verdict (:func:`franq.verdicts.claim_verdict`) for it
    (else the verdict the claim was scored with, if any)."""
    rows, signals, meta = [], set(), set()
    for line in as_lines(results):
        r = line.result if threshold is None else with_verdicts(line.result, threshold)
        weakest = r.weakest_claim
        scored_by = dict(zip(SCORED_BY, (r.stack.uq_faith, r.stack.uq_unfaith, r.stack.faithfulness,
                                         r.calibrator.named() if r.calibrator else "uncalibrated")))
        example = line.example
        labels = () if example is None else example.claim_labels or ()
        fields = {} if example is None or not example.meta else example.meta
        for k, c in enumerate(r.claims):
            row = {"id": line.id, "claim_index": k, "text": c.claim.text, "status": c.status, "note": c.claim.note,
                   "verdict": c.verdict, "verdict_reason": c.verdict_reason, "p_true": claim_p_true(c),
                   **{col: getattr(c, col) for col in VALUES}, **scored_by, "answer_p_all_true": r.p_all_true,
                   "weakest": weakest is not None and weakest.index == k}
            given = labels[k] if k < len(labels) else {}
            row.update({col: given.get(col) for col in LABELS})
            for name, v in c.signals.items():
                signals.add(f"signal.{name}")
                row[f"signal.{name}"] = v
            for key, v in fields.items():
                meta.add(f"meta.{key}")
                row[f"meta.{key}"] = (
                    v if isinstance(v, (str, int, float, bool)) or v is None else json.dumps(v, ensure_ascii=False))
            rows.append(row)
    header = ["id", "claim_index", "text", *CLAIM_COLUMNS, *sorted(signals), *sorted(meta)]
    return header, rows


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet may read as the start of a formula (OWASP, CSV injection)."""
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def escape_cell(value):
    """``value`` safe to open in a spreadsheet: a text starting with one of
    :data:`FORMULA_START` gets a single quote in front, unless it is a plain number;
    anything else (numbers, None, booleans) is returned as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_csv(results: Iterable, stream, *, raw: bool = False, threshold: float | None = None) -> int:
    """Write :func:`csv_rows` to a text stream, text cells escaped against formula injection
    (:func:`escape_cell`) unless ``raw``; ``threshold``: the verdict column's cut (else the
    records' own verdicts); returns the number of rows."""
    header, rows = csv_rows(results, threshold=threshold)
    # rows end in "\n"; written with "\r\n" first so that a cell holding a carriage return
    # is quoted too (the csv module quotes only the characters of its line terminator)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=header, extrasaction="ignore", lineterminator="\r\n")

    def flush() -> None:
        stream.write(buf.getvalue()[:-2] + "\n")
        buf.seek(0)
        buf.truncate()

    writer.writeheader()
    flush()
    for row in rows:
        writer.writerow(row if raw else {k: escape_cell(v) for k, v in row.items()})
        flush()
    return len(rows)


def csv_text(results: Iterable, *, raw: bool = False) -> str:
    buf = io.StringIO()
    write_csv(results, buf, raw=raw)
    return buf.getvalue()
