"""The natural dev sets of the calibrators (franq.fit.natural, issue 45): the WiCE held-out
set read from its committed snapshot (support labels as is_true), and the conditions-only
long refit (franq.fit.shipped_verifier.long_soft_fit)."""
from __future__ import annotations

import gzip
import json
from types import SimpleNamespace

import numpy as np

from calibration.three_condition import ThreeConditionCalibrator
from franq.fit import natural as nat
from franq.fit import shipped_verifier as sv
from franq.fit.generations import datasets_dir


def _snapshot_rows() -> list[dict]:
    with gzip.open(datasets_dir() / "generations" / nat.WICE_SNAPSHOT, "rt", encoding="utf-8") as f:
        return [json.loads(x) for x in f if x.strip()]


def test_wice_records_are_the_held_out_items_whose_page_fits():
    records = nat.wice_records(datasets_dir())
    held = [json.loads(x) for x in (datasets_dir() / "wice" / "heldout.jsonl").read_text(encoding="utf-8").splitlines()]
    assert 0 < len(records) < len(held)
    assert all(sum(len(p["text"]) for p in r["passages"]) <= nat.WICE_MAX_CHARS for r in records)
    longer = [r for r in held if sum(len(p["text"]) for p in r["passages"]) > nat.WICE_MAX_CHARS]
    assert len(records) + len(longer) == len(held)
    # the committed snapshot scored exactly these records, in this order, with UQ values
    rows = _snapshot_rows()
    assert [r["id"] for r in rows] == [r["id"] for r in records]
    assert all(c["status"] == "scored" and c["uq_faith"] is not None and c["uq_unfaith"] is not None
               for r in rows for c in r["claims"])


def test_wice_lines_label_support_as_is_true_and_keep_the_scoring_verifiers_conditions(monkeypatch):
    rows = _snapshot_rows()
    scored_by = rows[0]["stack"]["faithfulness"]
    lines = nat.wice_lines(datasets_dir(), SimpleNamespace(name=scored_by))
    arrays = nat._long_arrays(lines)
    want = [c["is_faithful"] for r in rows for c in r["claims"]]
    assert arrays["is_true"] == [float(x) for x in want] and 0 < sum(want) < len(want)
    assert arrays["p_contradicted"] == [c["p_contradicted"] for r in rows for c in r["claims"]]
    # another verifier: its conditions are computed over the same passages
    seen = {}

    def fake(lines, passages, backend):
        seen.update(n=len(lines), passages=len(passages), backend=backend.name)
        return lines

    monkeypatch.setattr(sv, "with_conditions", fake)
    nat.wice_lines(datasets_dir(), SimpleNamespace(name="verifier:other"))
    assert seen == {"n": len(rows), "passages": len(rows), "backend": "verifier:other"}


def _claims(n: int, share_true: float, seed: int):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([1, 1, 1], size=n)
    s = {"p_faithful": p[:, 0], "p_contradicted": p[:, 1], "p_not_mentioned": p[:, 2],
         "uq_faith": rng.uniform(1e-6, 1, n), "uq_unfaith": rng.uniform(1e-6, 1, n),
         "is_true": (rng.random(n) < share_true).astype(float), "answer": [f"a{k // 4}" for k in range(n)]}
    return nat.training_claims_of(s)


def test_the_conditions_only_refit_has_flat_maps_moved_to_the_natural_share(tmp_path):
    real, contra = _claims(200, 0.9, 0), _claims(40, 0.0, 1)
    cal = sv.long_soft_fit(real, contra, "verifier:tiny", {"mode": "long"}, flat=sv.CONDITIONS_ONLY)
    assert cal.variant == "soft" and cal.flat == sv.CONDITIONS_ONLY
    assert cal.prior == float(real.is_true.mean()) and "flat map" in cal.description and "17%" in cal.description
    parts = cal.predict_components(real.inputs())
    for t in (parts.p_true_if_supported, parts.p_true_if_contradicted, parts.p_true_if_not_mentioned):
        assert np.allclose(t, t[0]) and 0.0 < t[0] < 1.0  # one value per condition, never 0 or 1
    cal.to_json(tmp_path / "c.json")
    back = ThreeConditionCalibrator.from_json(tmp_path / "c.json")
    assert np.array_equal(back.predict(real.inputs()), cal.predict(real.inputs()))
