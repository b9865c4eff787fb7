"""A calibrator moved to a new base rate without labels (issue 45 item 4): the logit shift
of each map, and EM (Saerens et al. 2002) recovering a known prior."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from calibration.base import CalibratorFileError
from calibration.contract import ClaimInputs
from calibration.prior import MIX_RULE, em_prior_of, logit_shift, shift_probabilities
from calibration.three_condition import ThreeConditionCalibrator
from franq.cli import main
from franq.fit.prior import scored_inputs
from test_fit_calibrator import scored_records


def test_the_shift_is_bayes_rule_on_the_odds():
    assert logit_shift(0.3, 0.3) == 0.0
    assert logit_shift(0.5, 0.8) == pytest.approx(np.log(4))
    # a posterior at the training prior moves to the deployment prior; 0 and 1 stay
    np.testing.assert_allclose(shift_probabilities([0.5, 0.0, 1.0], logit_shift(0.5, 0.8)), [0.8, 0.0, 1.0])
    # odds multiply: P/(1-P) * (P'/(1-P')) / (P/(1-P))
    p = np.array([0.2, 0.6])
    out = shift_probabilities(p, logit_shift(0.9, 0.6))
    np.testing.assert_allclose(out / (1 - out), p / (1 - p) * (0.6 / 0.4) / (0.9 / 0.1))
    with pytest.raises(ValueError, match="'to_prior' must be a share of true claims strictly between 0 and 1"):
        logit_shift(0.5, 1.0)


def test_em_recovers_a_known_deployment_prior():
    rng = np.random.default_rng(0)
    for true_prior in (0.2, 0.5, 0.9):
        y = rng.uniform(size=20_000) < true_prior
        x = rng.normal(np.where(y, 1.0, -1.0), 1.0)
        posterior_at_half = 1 / (1 + np.exp(-2 * x))  # exact posterior under a 50% training prior
        estimate, iterations = em_prior_of(posterior_at_half, 0.5)
        assert estimate == pytest.approx(true_prior, abs=0.015) and iterations > 1


def _fitted(tmp_path):
    src = scored_records(tmp_path / "scored.jsonl")
    res = CliRunner().invoke(main, ["fit", "calibrator", str(src), "-o", str(tmp_path / "cal.json"), "--folds", "0"])
    assert res.exit_code == 0, res.output
    return src, ThreeConditionCalibrator.from_json(tmp_path / "cal.json")


def test_p_true_moves_as_a_whole_from_the_fits_own_mean_and_the_file_records_it(tmp_path):
    """A calibrator fitted now records ``implied_prior``, its mean P(true) on its fit claims; a
    prior moves the mixed P(true) from there (Bayes' rule on the posterior), and each map by the
    same shift; moving it to that share changes nothing."""
    src, cal = _fitted(tmp_path)
    base = cal.base_rate
    assert base == pytest.approx(json.loads((tmp_path / "cal.report.json").read_text())["n_true"] / 450)
    train = scored_inputs(src, cal)
    assert cal.implied_prior_ == pytest.approx(float(np.mean(cal.predict(train))))  # every claim weighs 1 here
    X = ClaimInputs([0.8, 0.1], [0.5, 0.2], [0.3, 0.4], p_contradicted=[0.1, 0.1], p_not_mentioned=[0.1, 0.8])
    before = cal.predict_components(X)
    cal.prior = cal.implied_prior_
    np.testing.assert_allclose(cal.predict(X), before.p_true)
    cal.prior = 0.3
    after = cal.predict_components(X)
    shift = logit_shift(cal.implied_prior_, 0.3)
    np.testing.assert_allclose(after.p_true, shift_probabilities(before.p_true, shift), atol=1e-12)
    for part in ("p_true_if_supported", "p_true_if_contradicted", "p_true_if_not_mentioned"):
        np.testing.assert_allclose(getattr(after, part), shift_probabilities(getattr(before, part), shift), atol=1e-12)
    cal.to_json(tmp_path / "moved.json")
    saved = json.loads((tmp_path / "moved.json").read_text())
    assert saved["implied_prior"] == cal.implied_prior_ and saved["prior"]["implied"] == cal.implied_prior_
    assert saved["prior"]["rule"].startswith("P(true), the mix")
    again = ThreeConditionCalibrator.from_json(tmp_path / "moved.json")
    assert again.prior == 0.3 and again.base_rate == pytest.approx(base)
    np.testing.assert_allclose(again.predict(X), after.p_true)


def test_a_file_without_implied_prior_keeps_moving_each_map(tmp_path):
    """Files written before ``implied_prior`` (the shipped ones among them) read as before: each
    map's output moves from the fit's share true before mixing."""
    _fitted(tmp_path)
    obj = json.loads((tmp_path / "cal.json").read_text())
    del obj["implied_prior"]
    old = ThreeConditionCalibrator.from_dict(obj)
    X = ClaimInputs([0.8, 0.1], [0.5, 0.2], [0.3, 0.4], p_contradicted=[0.1, 0.1], p_not_mentioned=[0.1, 0.8])
    before = old.predict_components(X)
    old.prior = 0.3
    after = old.predict_components(X)
    moved = {}
    for part in ("p_true_if_supported", "p_true_if_contradicted", "p_true_if_not_mentioned"):
        moved[part] = shift_probabilities(getattr(before, part), logit_shift(old.base_rate, 0.3))
        np.testing.assert_allclose(getattr(after, part), moved[part], atol=1e-12)
    p = np.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])
    mix = (p[:, 0] * moved["p_true_if_supported"] + p[:, 1] * moved["p_true_if_contradicted"]
           + p[:, 2] * moved["p_true_if_not_mentioned"])
    np.testing.assert_allclose(after.p_true, mix, atol=1e-12)
    assert old.prior_rule == "each map's output: logit + logit_shift" and "implied_prior" not in old.to_dict()
    obj["implied_prior"] = 1.0
    with pytest.raises(CalibratorFileError, match="'implied_prior' must be a share of true claims"):
        ThreeConditionCalibrator.from_dict(obj)


def test_the_knowledge_base_rate_and_interval_move_with_t_n(tmp_path):
    """The ``uncertain`` verdict compares T_n with its map's base rate: a prior moves both, so a
    not-mentioned claim at the base rate stays at it (and its interval around it)."""
    _, cal = _fitted(tmp_path)
    X = ClaimInputs([0.1, 0.1], [0.5, 0.2], [0.3, 0.4], p_contradicted=[0.1, 0.1], p_not_mentioned=[0.8, 0.8])
    before = cal.predict_components(X).knowledge
    cal.prior = 0.9
    after = cal.predict_components(X).knowledge
    shift = logit_shift(cal.implied_prior_, 0.9)
    assert after.base_rate == pytest.approx(float(shift_probabilities(before.base_rate, shift)))
    assert after.base_rate > before.base_rate
    if before.low is not None:
        np.testing.assert_allclose(after.low, shift_probabilities(before.low, shift))
        np.testing.assert_allclose(after.high, shift_probabilities(before.high, shift))


def test_fit_prior_command_moves_a_calibrator_by_a_given_or_estimated_prior(tmp_path):
    _src, cal = _fitted(tmp_path)
    res = CliRunner().invoke(main, ["fit", "prior", str(tmp_path / "cal.json"), "-o", str(tmp_path / "p.json"),
                                    "--prior", "0.4"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "p.json").read_text())["prior"]["deployment"] == 0.4
    assert "(fitted, its P(true) there " in res.output
    assert "moved as P(true), the mix: logit + logit_shift, from the fit's mean P(true)" in res.output
    # deployment where far fewer claims are true: EM from the unlabelled scored claims
    dep = scored_records(tmp_path / "dep.jsonl", n_answers=300, seed=5, shares=(0.2, 0.5, 0.3))
    truth = np.mean([c["is_true"] for line in dep.read_text().splitlines() for c in json.loads(line)["claims"]])
    res = CliRunner().invoke(main, ["fit", "prior", str(tmp_path / "cal.json"), "-o", str(tmp_path / "em.json"),
                                    "--from-records", str(dep)])
    assert res.exit_code == 0, res.output
    estimate = json.loads((tmp_path / "em.json").read_text())["prior"]["deployment"]
    assert abs(estimate - truth) < abs(cal.base_rate - truth) and abs(estimate - truth) < 0.1
    assert "EM assumes that only the share of true claims changed" in res.output  # not with a given prior:
    assert "EM assumes" not in CliRunner().invoke(main, ["fit", "prior", str(tmp_path / "cal.json"), "-o",
                                                         str(tmp_path / "q.json"), "--prior", "0.4"]).output
    res = CliRunner().invoke(main, ["fit", "prior", str(tmp_path / "cal.json"), "-o", str(tmp_path / "x.json")])
    assert res.exit_code != 0 and "give one of --prior P, --from-labelled LABELLED.jsonl and --from-records" in res.output


def test_the_share_of_a_few_labels_stays_inside_zero_and_one_with_its_interval():
    from franq.errors import InputError
    from franq.fit.prior import share_of_labels

    read = share_of_labels([1] * 47 + [0] * 3)
    assert read["share"] == pytest.approx(47.5 / 51) and read["n"] == 50 and read["true"] == 47
    low, high = read["interval"]
    assert low < 47 / 50 < high and 0.8 < low and high < 1.0
    every = share_of_labels([1] * 10)  # all true: a share a calibrator can still move to
    assert 0.9 < every["share"] < 1.0 and every["interval"][1] == 1.0
    assert share_of_labels([0, 1])["interval"][0] < 0.1  # two labels say little
    with pytest.raises(InputError, match="no labelled claims"):
        share_of_labels([])


def test_fit_prior_from_labelled_claims_moves_to_their_share_and_says_how_sure(tmp_path):
    """A few labelled claims of the deployment (`franq score` output with `is_true`, what `franq
    fit calibrator` reads): the calibrator moves to their share, the output gives n, the
    interval and how many labels the benchmark needed; unlabelled claims are left out."""
    _fitted(tmp_path)
    dep = scored_records(tmp_path / "dep.jsonl", n_answers=20, seed=5, shares=(0.2, 0.5, 0.3))
    lines = [json.loads(x) for x in dep.read_text().splitlines()]
    for line in lines[10:]:  # half the answers unlabelled
        for c in line["claims"]:
            del c["is_true"]
    dep.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    labels = [c["is_true"] for line in lines[:10] for c in line["claims"]]
    res = CliRunner().invoke(main, ["fit", "prior", str(tmp_path / "cal.json"), "-o", str(tmp_path / "l.json"),
                                    "--from-labelled", str(dep)])
    assert res.exit_code == 0, res.output
    moved = json.loads((tmp_path / "l.json").read_text())["prior"]
    assert moved["deployment"] == pytest.approx((sum(labels) + 0.5) / (len(labels) + 1), abs=1e-4)
    assert f"the share of {len(labels)} labelled claims of {dep}, {sum(labels)} true" in res.output
    assert "95% interval" in res.output and "Label more where the interval is wide" in res.output
    assert "EM assumes" not in res.output
    res = CliRunner().invoke(main, ["fit", "prior", str(tmp_path / "cal.json"), "-o", str(tmp_path / "m.json"),
                                    "--from-labelled", str(dep), "--prior", "0.3"])
    assert res.exit_code != 0 and "give one of --prior P, --from-labelled" in res.output


def test_a_new_base_rate_drops_the_source_files_evaluation(tmp_path):
    """A shipped file's ``evaluation`` was measured at its fitted base rate: the moved copy
    does not carry it, and the command says so."""
    _fitted(tmp_path)
    obj = json.loads((tmp_path / "cal.json").read_text())
    obj["evaluation"] = {"a dev set": {"claims": 10, "ece": 0.05, "auroc": None}}
    (tmp_path / "cal.json").write_text(json.dumps(obj))
    res = CliRunner().invoke(main, ["fit", "prior", str(tmp_path / "cal.json"), "-o", str(tmp_path / "p.json"),
                                    "--prior", "0.4"])
    assert res.exit_code == 0, res.output
    assert "evaluation" not in json.loads((tmp_path / "p.json").read_text())
    assert "without the source file's 'evaluation'" in res.output


def _fast_like(seed=0, n=400, share=0.9):
    """A binary calibrator as the fast preset ships: variant none, the map of P_supported to
    P(true) (UQ_faith 1, UQ_unfaith 0), fitted where ``share`` of claims are true."""
    from calibration.franq import FranqCalibrator

    rng = np.random.default_rng(seed)
    y = (rng.random(n) < share).astype(float)
    p = np.clip(rng.normal(0.35 + 0.3 * y, 0.2), 0.01, 0.99)
    return FranqCalibrator(variant="none", calibrate_faithfulness=True, fitted_for={"mode": "fast"}).fit(
        ClaimInputs(p, np.ones(n), np.zeros(n)), y, is_faithful=y), float(y.mean())


def test_a_binary_calibrator_without_uq_maps_moves_its_p_true_and_keeps_it(tmp_path):
    """The fast preset's calibrator (variant none) has no UQ map: its P(true) moves by the logit
    shift; the file records the move and reads back the same."""
    from calibration.franq import FranqCalibrator

    cal, share = _fast_like()
    assert cal.base_rate == pytest.approx(share)
    X = ClaimInputs([0.2, 0.5, 0.9], [1.0] * 3, [0.0] * 3)
    before = np.clip(cal.predict(X), 1e-12, 1 - 1e-12)
    cal.prior = 0.3
    np.testing.assert_allclose(cal.predict(X), shift_probabilities(before, logit_shift(cal.implied_prior_, 0.3)), atol=1e-9)
    cal.to_json(tmp_path / "moved.json")
    saved = json.loads((tmp_path / "moved.json").read_text())
    assert saved["prior"]["deployment"] == 0.3 and saved["prior"]["rule"].startswith("P(true)")
    again = FranqCalibrator.from_json(tmp_path / "moved.json")
    assert again.prior == 0.3
    np.testing.assert_allclose(again.predict(X), cal.predict(X))
    cal.prior = 1.0
    with pytest.raises(ValueError, match="'prior'"):
        cal._validate_options()


def test_a_binary_calibrator_with_uq_maps_moves_p_true_as_a_whole():
    from calibration.franq import FranqCalibrator

    rng = np.random.default_rng(3)
    n = 600
    y = (rng.random(n) < 0.6).astype(float)
    p_f, a, b = rng.uniform(0, 1, n), np.clip(rng.uniform(0, 1, n) * (0.5 + 0.5 * y), 1e-3, 1), rng.uniform(0.01, 1, n)
    cal = FranqCalibrator(variant="soft").fit(ClaimInputs(p_f, a, b), y)
    assert cal.implied_prior_ == pytest.approx(float(np.mean(cal.predict(ClaimInputs(p_f, a, b)))))
    X = ClaimInputs([0.7, 0.2], [0.6, 0.3], [0.4, 0.8])
    before = cal.predict_components(X)
    cal.prior = 0.9
    after = cal.predict_components(X)
    shift = logit_shift(cal.implied_prior_, 0.9)
    np.testing.assert_allclose(after.p_true, shift_probabilities(before.p_true, shift), atol=1e-12)
    for part in ("p_true_if_supported", "p_true_if_unfaithful"):
        np.testing.assert_allclose(getattr(after, part), shift_probabilities(getattr(before, part), shift), atol=1e-12)
    assert np.all(after.p_true > before.p_true)
    obj = cal.to_dict()
    del obj["implied_prior"]  # a file from before: its UQ maps move, then mix
    old = FranqCalibrator.from_dict(obj)
    old_shift = logit_shift(old.base_rate, 0.9)
    parts = old.predict_components(X)
    np.testing.assert_allclose(parts.p_true_if_supported, shift_probabilities(before.p_true_if_supported, old_shift),
                               atol=1e-12)


def test_fit_prior_moves_the_shipped_fast_calibrator_by_em_from_fast_output(tmp_path):
    """`franq score --fast` output carries no UQ values (its stack's UQ scorers are none): EM
    reads them as the pipeline feeds the calibrator (UQ_faith 1, UQ_unfaith 0), and a
    deployment of mostly unsupported claims moves the shipped map's 0.93 base rate down (an
    estimate inside (0, 1): a third of them read as supported)."""
    from importlib.resources import files

    shipped = files("franq") / "data" / "calibrator-fast-verifier.json"
    fitted_for = json.loads(shipped.read_text())["fitted_for"]
    rng = np.random.default_rng(0)
    with open(tmp_path / "fast.jsonl", "w", encoding="utf-8") as f:
        for i in range(60):
            claims = []
            for j in range(3):
                ps = float(rng.uniform(0.0, 0.3) if j else rng.uniform(0.7, 1.0))  # a third supported
                claims.append({"claim": {"text": f"claim {i}.{j}", "char_spans": [[0, 5]], "token_positions": [],
                                         "token_ids": []}, "status": "scored", "p_faithful": ps,
                               "p_contradicted": (1 - ps) / 2, "p_not_mentioned": (1 - ps) / 2, "uq_faith": None,
                               "uq_unfaith": None, "p_true_raw": ps})
            f.write(json.dumps({"schema": 2, "id": str(i), "question": "q?", "answer": "a.", "claims": claims,
                                "mode": "long", "stack": fitted_for}) + "\n")  # as --fast writes them
    res = CliRunner().invoke(main, ["fit", "prior", str(shipped), "-o", str(tmp_path / "moved.json"),
                                    "--from-records", str(tmp_path / "fast.jsonl")])
    assert res.exit_code == 0, res.output
    moved = json.loads((tmp_path / "moved.json").read_text())["prior"]
    assert moved["fitted"] == pytest.approx(1961 / 2109) and 0.01 < moved["deployment"] < moved["fitted"] - 0.1
    # rebuilt by its recipe with implied_prior (2026-11-29): its P(true) moves as a whole, from the fit's mean output
    assert moved["implied"] == pytest.approx(moved["fitted"], abs=1e-3)  # an isotonic map keeps the mean it was fitted on
    assert "estimated by EM from 180 unlabelled claims" in res.output and f"moved as {MIX_RULE}" in res.output


def test_the_share_of_labels_is_read_from_unscored_examples_too(tmp_path):
    """Claims labelled in franq's input form need no scoring first; a short answer's own
    `is_true` counts where it lists no claims; a file without a label, or with a bad record,
    is refused naming the line."""
    from franq.errors import InputError
    from franq.fit.prior import labelled_share

    rows = [{"question": "q1", "passages": ["p"], "answer": "a. b.",
             "claims": [{"text": "a.", "is_true": True}, {"text": "b.", "is_true": False}, {"text": "c."}]},
            {"question": "q2", "passages": ["p"], "answer": "Paris", "is_true": True},
            {"question": "q3", "passages": ["p"], "answer": "x", "claims": [{"text": "x.", "is_true": True}]}]
    src = tmp_path / "examples.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    read = labelled_share(src)
    assert read["n"] == 4 and read["true"] == 3 and read["share"] == pytest.approx(3.5 / 5)
    src.write_text(json.dumps({"question": "q", "passages": ["p"], "answer": "a"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="no claims labelled 'is_true'"):
        labelled_share(src)
    src.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"question": "q"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 2.*missing field 'passages'"):
        labelled_share(src)


def test_fit_prior_takes_a_shipped_calibrator_by_the_name_franq_score_prints(tmp_path, monkeypatch):
    """From any directory: `franq score` names the shipped file `franq/data/calibrator-....json`,
    which is not a path outside a checkout; a name that is neither is refused in one line."""
    from franq.fit.shipped_verifier import LONG_NAME

    monkeypatch.chdir(tmp_path)
    for name in (f"franq/data/{LONG_NAME}", LONG_NAME):
        res = CliRunner().invoke(main, ["fit", "prior", name, "-o", "moved.json", "--prior", "0.9"])
        assert res.exit_code == 0, res.output
        assert json.loads((tmp_path / "moved.json").read_text())["prior"]["deployment"] == 0.9
        (tmp_path / "moved.json").unlink()
    res = CliRunner().invoke(main, ["fit", "prior", "calibrator-nope.json", "-o", "x.json", "--prior", "0.9"])
    assert res.exit_code != 0 and "no such file, nor a shipped calibrator's name" in res.output
    assert not (tmp_path / "x.json").exists()


def test_em_that_slows_down_short_of_a_bound_goes_on_to_it_and_stops_at_a_real_fixed_point():
    """A mean that stays below every share, by less the smaller the share (here q - q^2),
    makes EM's steps shrink below its tolerance short of the bound (as the probe calibrator on
    the embedded model's own answers did: 1.01e-4 after 822 steps). EM reads the mean a logit
    unit further on, sees it still moving, and goes on to the bound. A real fixed point, where
    the mean moves back past it, is kept where EM stopped."""
    from calibration.prior import EM_BOUNDS, _em_steps, at_bound, em_prior

    slow = lambda q: np.array([q - q * q])
    plain, _ = _em_steps(slow, 0.5, 1e-6, 1000)
    assert not at_bound(plain) and plain < 0.01  # where plain EM would stop: no fixed point there
    estimate, steps = em_prior(slow, 0.5)
    assert estimate == EM_BOUNDS[0] and at_bound(estimate) and steps <= 1000
    flat_near = lambda q: np.array([0.2 + 0.99 * (q - 0.2)])  # a fixed point at .2, slowly reached
    estimate, _ = em_prior(flat_near, 0.6)
    assert not at_bound(estimate) and abs(estimate - 0.2) < 0.01


def test_em_that_runs_to_a_bound_estimates_nothing_and_fit_prior_refuses_it(tmp_path, monkeypatch):
    """Posteriors whose mean stays above every share they are moved to (here: all .9 from a
    fitted .5) have no fixed point inside (0, 1): EM runs to its bound, and `franq fit prior`
    refuses to write a file from that, naming --prior."""
    from calibration.prior import EM_BOUNDS, at_bound
    from franq.fit import prior as fit_prior

    estimate, _ = em_prior_of(np.full(50, 0.9), 0.5)
    assert estimate == EM_BOUNDS[1] and at_bound(estimate) and not at_bound(0.9)
    _fitted(tmp_path)
    dep = scored_records(tmp_path / "dep.jsonl", n_answers=20, seed=5)
    monkeypatch.setattr(fit_prior, "estimate_prior", lambda cal, X: (EM_BOUNDS[1], 31))
    res = CliRunner().invoke(main, ["fit", "prior", str(tmp_path / "cal.json"), "-o", str(tmp_path / "em.json"),
                                    "--from-records", str(dep)])
    assert res.exit_code != 0 and "EM found no share of true claims inside (0, 1)" in res.output
    assert "give the share with --prior" in res.output and not (tmp_path / "em.json").exists()
