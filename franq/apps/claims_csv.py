"""The CSV view of scored answers (``franq report --csv``, ``franq score --format csv``):
one row per claim, from results read back by ``franq.read_results(..., with_input=True)``
or bare ``AnswerScore`` objects (the HTML view is :mod:`franq.apps.render`)."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable

from franq.apps.render import as_lines, claim_p_true

VALUES = ("p_true_calibrated", "p_true_raw", "p_faithful", "uq_faith", "uq_unfaith", "p_true_if_faithful_calibrated",
          "p_true_if_unfaithful_calibrated", "p_faithful_calibrated", "p_supported", "p_contradicted",
          "p_not_mentioned", "p_true_if_contradicted_calibrated")
"""A claim's numbers, as ``ClaimScore`` names them."""
LABELS = ("is_true", "is_faithful")
"""The claim labels the input carried (empty when it had none)."""
CLAIM_COLUMNS = ("status", "note", "verdict", "p_true", *VALUES, *LABELS)


def csv_rows(results: Iterable) -> tuple[list[str], list[dict]]:
    """One row per claim: ``id``, ``claim_index``, ``text``, the status and every value
    (``p_true`` is the calibrated value when present, else the raw mix), then each raw
    signal as ``signal.<name>`` and each ``meta`` field as ``meta.<key>``."""
    rows, signals, meta = [], set(), set()
    for line in as_lines(results):
        example = line.example
        labels = () if example is None else example.claim_labels or ()
        fields = {} if example is None or not example.meta else example.meta
        for k, c in enumerate(line.result.claims):
            row = {"id": line.id, "claim_index": k, "text": c.claim.text, "status": c.status, "note": c.claim.note,
                   "verdict": c.verdict, "p_true": claim_p_true(c), **{col: getattr(c, col) for col in VALUES}}
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


def write_csv(results: Iterable, stream) -> int:
    """Write :func:`csv_rows` to a text stream; returns the number of rows."""
    header, rows = csv_rows(results)
    writer = csv.DictWriter(stream, fieldnames=header, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return len(rows)


def csv_text(results: Iterable) -> str:
    buf = io.StringIO()
    write_csv(results, buf)
    return buf.getvalue()
