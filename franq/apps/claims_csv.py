"""The CSV view of scored answers (``franq report --csv``, ``franq score --format csv``):
one row per claim, from results read back by ``franq.read_results(..., with_input=True)``
or result records (the HTML view is :mod:`franq.apps.render`)."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable

from franq.apps.render import as_records, claim_p_true

CLAIM_COLUMNS = ("status", "note", "verdict", "p_true", "p_true_calibrated", "p_true_raw", "p_faithful",
                 "uq_faith", "uq_unfaith", "p_true_if_faithful_calibrated", "p_true_if_unfaithful_calibrated",
                 "p_faithful_calibrated", "is_true", "is_faithful")


def csv_rows(records: Iterable) -> tuple[list[str], list[dict]]:
    """One row per claim: ``id``, ``claim_index``, ``text``, the status and every value
    (``p_true`` is the calibrated value when present, else the raw mix), then each raw
    signal as ``signal.<name>`` and each ``meta`` field as ``meta.<key>``."""
    rows, signals, meta = [], set(), set()
    for r in as_records(records):
        for k, c in enumerate(r.get("claims", ())):
            claim = c.get("claim") or {}
            row = {"id": r.get("id"), "claim_index": k, "text": claim.get("text", ""), "status": c.get("status"),
                   "note": claim.get("note"), "p_true": claim_p_true(c)}
            row.update({col: c.get(col) for col in CLAIM_COLUMNS if col not in row})
            for name, v in (c.get("signals") or {}).items():
                signals.add(f"signal.{name}")
                row[f"signal.{name}"] = v
            for key, v in (r.get("meta") or {}).items():
                meta.add(f"meta.{key}")
                row[f"meta.{key}"] = (
                    v if isinstance(v, (str, int, float, bool)) or v is None else json.dumps(v, ensure_ascii=False))
            rows.append(row)
    header = ["id", "claim_index", "text", *CLAIM_COLUMNS, *sorted(signals), *sorted(meta)]
    return header, rows


def write_csv(records: Iterable, stream) -> int:
    """Write :func:`csv_rows` to a text stream; returns the number of rows."""
    header, rows = csv_rows(records)
    writer = csv.DictWriter(stream, fieldnames=header, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return len(rows)


def csv_text(records: Iterable) -> str:
    buf = io.StringIO()
    write_csv(records, buf)
    return buf.getvalue()
