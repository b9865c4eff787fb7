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
          "p_true_if_unfaithful_calibrated", "p_faithful_calibrated")
"""A claim's numbers, as ``ClaimScore`` names them."""
LABELS = ("is_true", "is_faithful")
"""The claim labels the input carried (empty when it had none)."""
SCORED_BY = ("uq_faith_scorer", "uq_unfaith_scorer", "faithfulness_backend", "calibrator")
"""What produced each row's numbers: the scorer pair, the faithfulness backend, the calibrator file (or "uncalibrated")."""
CLAIM_COLUMNS = ("status", "note", "verdict", "p_true", *VALUES, *LABELS, *SCORED_BY)


def csv_rows(results: Iterable, *, threshold: float | None = None) -> tuple[list[str], list[dict]]:
    """One row per claim: ``id``, ``claim_index``, ``text``, the status and every value
    (``p_true`` is the calibrated value when present, else the raw mix), what produced them
    (:data:`SCORED_BY`), then each raw signal as ``signal.<name>`` and each ``meta`` field
    as ``meta.<key>``. ``threshold``: the verdict is ``p_true`` against it (else the verdict
    the claim was scored with, if any)."""
    rows, signals, meta = [], set(), set()
    for line in as_lines(results):
        r = line.result
        scored_by = dict(zip(SCORED_BY, (r.stack.get("uq_faith"), r.stack.get("uq_unfaith"), r.faithfulness,
                                         r.calibrator.path if r.calibrator else "uncalibrated")))
        example = line.example
        labels = () if example is None else example.claim_labels or ()
        fields = {} if example is None or not example.meta else example.meta
        for k, c in enumerate(line.result.claims):
            row = {"id": line.id, "claim_index": k, "text": c.claim.text, "status": c.status, "note": c.claim.note,
                   "verdict": c.verdict if threshold is None else _verdict(claim_p_true(c), threshold),
                   "p_true": claim_p_true(c), **{col: getattr(c, col) for col in VALUES}, **scored_by}
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


def _verdict(p: float | None, threshold: float) -> str | None:
    """As the pipeline gives it (``franq.ClaimScore.verdict``): none for a claim that was not scored."""
    return None if p is None else "likely_true" if p >= threshold else "likely_false"


def write_csv(results: Iterable, stream, *, threshold: float | None = None) -> int:
    """Write :func:`csv_rows` to a text stream; returns the number of rows."""
    header, rows = csv_rows(results, threshold=threshold)
    writer = csv.DictWriter(stream, fieldnames=header, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return len(rows)


def csv_text(results: Iterable) -> str:
    buf = io.StringIO()
    write_csv(results, buf)
    return buf.getvalue()
