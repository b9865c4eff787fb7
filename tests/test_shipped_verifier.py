"""`franq fit shipped` fits the three-condition calibrators of the shipped verifier
end to end, here with a tiny random verifier standing in for the shipped one
and a few answers of the committed data."""
from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

from calibration.three_condition import ThreeConditionCalibrator
from franq.calibrate import load_calibrator
from franq.cli import main
from franq.fit import shipped as table
from franq.fit import shipped_verifier as sv
from franq.fit.generations import datasets_dir
from tiny_encoders import build_verifier


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    torch.set_num_threads(1)
    return build_verifier(tmp_path_factory.mktemp("shipped") / "verifier", max_length=160, window_words=100)


EVALUATION = {"expertqa-rand_test": {"claims": 3, "share_true": 0.6667, "ece": 0.1, "brier": 0.2,
                                     "constant_brier": 0.2222, "auroc": None}}


@pytest.fixture(autouse=True)
def _no_dev_set_pass(monkeypatch):
    """The recipe's evaluation reads the verifier's pass over every natural dev set: stubbed
    here (tested on a cached pass below)."""
    monkeypatch.setattr(sv, "long_evaluation", lambda cal, datasets, verifier=None: EVALUATION)


def test_fit_shipped_writes_the_long_three_condition_calibrator(tiny, tmp_path, monkeypatch):
    import franq.verifier.model as model

    monkeypatch.setattr(model, "shipped_verifier_dir", lambda: tiny)
    sample = sv.calibration_sample(datasets_dir())[:6]
    monkeypatch.setattr(sv, "calibration_sample", lambda datasets: sample)
    res = CliRunner().invoke(main, ["fit", "shipped", sv.LONG_NAME, "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    cal = load_calibrator(tmp_path / sv.LONG_NAME)
    assert isinstance(cal, ThreeConditionCalibrator) and cal.variant in ("condition", "soft")
    assert cal.fitted_for["faithfulness"].startswith("verifier:tiny-verifier") and cal.fitted_for["mode"] == "long"
    assert "ExpertQA" in cal.description and "contradicted" in cal.description
    assert cal.n_samples_ > 10
    assert cal.evaluation == EVALUATION  # the recipe's held-apart dev sets, in the file


def test_the_long_evaluation_reads_the_dev_sets_pass_and_scores_the_calibrator(tiny, tmp_path):
    import json

    import numpy as np

    from franq.fit import natural as nat

    rng = np.random.default_rng(0)

    def fake(n):
        return {**{f: rng.random(n).tolist() for f in nat.FIELDS}, "is_true": (rng.random(n) < 0.7).tolist(),
                "is_faithful": [True] * n, "answer": [str(i // 3) for i in range(n)]}

    (tmp_path / "datasets").mkdir()
    cache = tmp_path / nat.cache_path(sv.verifier_backend(tiny).name)
    cache.parent.mkdir(parents=True)
    cache.write_text(json.dumps({"expertqa-test": fake(60), "expertqa-test-contra": fake(9), "wice-heldout": fake(12)}))
    X = nat.inputs(fake(200))
    cal = ThreeConditionCalibrator(variant="soft").fit(X, rng.random(200) < 0.7)
    ev = nat.long_evaluation(cal, tmp_path / "datasets", tiny, echo=lambda m: None)
    assert list(ev) == list(nat.LONG_EVALUATION)
    assert [ev[k]["claims"] for k in ev] == [60, 69, 12]
    row = ev["expertqa-rand_test"]
    assert 0 <= row["ece"] <= 1 and 0 <= row["brier"] <= 1 and 0 <= row["auroc"] <= 1 and 0 < row["share_true"] < 1
    cal.evaluation = ev
    assert ThreeConditionCalibrator.from_dict(cal.to_dict()).evaluation == ev


def test_short_three_condition_calibrator_from_the_committed_samples(tiny, tmp_path):
    path = sv.short_verifier_calibrator(datasets_dir(), tmp_path, verifier=tiny, n=12)
    cal = ThreeConditionCalibrator.from_json(path)
    assert cal.variant == "soft" and cal.fitted_for["mode"] == "short"
    assert cal.fitted_for["faithfulness"].startswith("verifier:tiny-verifier") and "nq-open" in cal.description


def test_verifier_calibrators_are_listed_once_the_verifier_ships():
    shipped = (table.data_dir() / "verifier" / "card.json").is_file()
    names = {s.name for s in table.SHIPPED}
    assert (sv.LONG_NAME in names) == shipped and (sv.SHORT_NAME in names) == shipped
    assert [s.name for s in table.lookup([sv.LONG_NAME])] == [sv.LONG_NAME]  # nameable either way


def test_not_mentioned_pairs_add_each_corrupted_claim_and_its_original_to_t_n(tiny):
    from franq.fit.training_claims import TrainingClaims, claim_keys, training_claims

    backend = sv.verifier_backend(tiny)
    sample = sv.calibration_sample(datasets_dir())[:12]
    real = sv.long_verifier_lines(datasets_dir(), backend, sample)
    contra = [x for x in sv.contradicted_lines(datasets_dir(), backend)
              if x.id.removesuffix("-contradicted") in {r["id"] for r in sample}]
    assert contra, "the first answers of the sample have corrupted copies"
    real_claims, contra_claims = training_claims(real), training_claims(contra)
    originals, corrupted = sv.not_mentioned_pairs(real, real_claims, contra, contra_claims)
    assert len(originals) == len(corrupted) == len(contra)  # one corrupted claim per copy
    assert originals.is_true.all() and not corrupted.is_true.any()
    # the original is the claim at the corrupted one's index in the same answer
    made_from = {(cid.removesuffix("-contradicted"), i) for cid, i in claim_keys(contra)}
    keys = claim_keys(real)
    assert sorted(originals.uq_unfaith) == sorted(real_claims.uq_unfaith[[k in made_from for k in keys]])
    joined = TrainingClaims.join([real_claims, contra_claims])
    assert len(joined) == len(real_claims) + len(contra_claims)
    assert list(joined.uq_unfaith) == [*real_claims.uq_unfaith, *contra_claims.uq_unfaith]
    assert joined.groups.max() == real_claims.groups.max() + 1 + contra_claims.groups.max()


def test_the_long_calibrator_with_pairs_fits_them_as_not_mentioned(tiny, tmp_path, monkeypatch):
    sample = sv.calibration_sample(datasets_dir())[:12]
    monkeypatch.setattr(sv, "calibration_sample", lambda datasets: sample)
    counts = {}
    for pairs in (False, True):
        out = tmp_path / str(pairs)
        out.mkdir()
        path = sv.long_verifier_calibrator(datasets_dir(), out, verifier=tiny, pairs=pairs)
        counts[pairs] = ThreeConditionCalibrator.from_json(path).counts_
    added = counts[True]["not_mentioned"]["n"] - counts[False]["not_mentioned"]["n"]
    assert added > 0 and added % 2 == 0
    assert counts[True]["not_mentioned"]["false"] - counts[False]["not_mentioned"]["false"] == added // 2
    assert counts[True]["supported"] == counts[False]["supported"]
    assert counts[True]["contradicted"] == counts[False]["contradicted"]


def test_the_shipped_long_calibrator_states_its_held_apart_dev_sets():
    """Issue 45.1: ECE, Brier and AUROC per dev set in the file (its recipe measures them)."""
    ev = ThreeConditionCalibrator.from_json(table.data_dir() / sv.LONG_NAME).evaluation
    assert set(ev) == {"expertqa-rand_test", "expertqa-rand_test+contradicted", "wice-heldout (label: supported)"}
    natural = ev["expertqa-rand_test"]
    assert natural["claims"] == 1104 and natural["share_true"] > 0.9
    for row in ev.values():
        assert all(0 <= row[k] <= 1 for k in ("share_true", "ece", "brier", "constant_brier", "auroc"))
        assert row["constant_brier"] == pytest.approx(row["share_true"] * (1 - row["share_true"]), abs=2e-4)
