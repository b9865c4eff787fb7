"""The held-out short-form table (franq.fit.verifier.eval.short_table): its counts are the
rows' own, read per passage variant."""
from types import SimpleNamespace

import numpy as np

from calibration.contract import ClaimInputs
from calibration.three_condition import ThreeConditionCalibrator
from franq.fit.verifier.eval import short_table


def _row(variant, p_s, p_c, uq, right, status="scored"):
    claim = SimpleNamespace(p_faithful=p_s, p_contradicted=p_c, p_not_mentioned=1 - p_s - p_c,
                            uq_faith=uq, uq_unfaith=uq, status=status)
    return variant, SimpleNamespace(claims=[claim]), right


def test_short_table_counts_per_variant():
    rng = np.random.default_rng(0)
    n = 60
    y = rng.random(n) < 0.5
    cal = ThreeConditionCalibrator(variant="soft").fit(
        ClaimInputs(np.where(y, 0.8, 0.1), np.where(y, 0.9, 0.2), np.where(y, 0.9, 0.2),
                    p_contradicted=np.where(y, 0.1, 0.8), p_not_mentioned=np.full(n, 0.1)), y.astype(int))
    rows = [_row("clean", 0.1, 0.8, 0.2, False), _row("clean", 0.1, 0.8, 0.2, False),
            _row("clean", 0.8, 0.1, 0.9, True), _row("clean", 0.8, 0.1, 0.9, False),
            _row("clean", 0.5, 0.4, 0.5, True, status="skipped"),
            _row("corrupted", 0.1, 0.1, 0.2, False), _row("corrupted", 0.8, 0.1, 0.9, True)]
    lines = short_table(cal, rows)
    assert len(lines) == 4 and lines[0].startswith("| passages |")
    clean = [c.strip() for c in lines[2].split("|")[1:-1]]
    corrupted = [c.strip() for c in lines[3].split("|")[1:-1]]
    assert clean[:3] == ["clean", "4", "3"]  # the skipped claim is not counted
    assert clean[6:8] == ["2", "2"]  # two wrong answers with P_c largest, both below 0.5
    assert clean[8] == "1 of 1" and clean[9] == "1 of 3"  # the supported wrong one comes out likely true
    assert corrupted[:3] == ["corrupted", "2", "1"] and corrupted[6] == "0"
    assert short_table(cal, [])[2:] == []


def test_fit_sets_are_the_fit_splits():
    from pathlib import Path

    from franq.fit.verifier.eval import claim_items, fit_evidence_sets

    datasets = Path(__file__).resolve().parents[1] / "datasets"
    fit = fit_evidence_sets(datasets)
    assert list(fit) == ["wice fit", "expertqa train (400)"]
    assert [len(y) for _, y in fit.values()] == [205, 400]
    assert all(0 < y.sum() < len(y) for _, y in fit.values())
    heldout = {c for _, c in claim_items(datasets / "wice" / "heldout.jsonl")[0]}
    assert not heldout & {c for _, c in fit["wice fit"][0]}
