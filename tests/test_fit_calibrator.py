"""`franq fit calibrator` as a user calibrates to their own data (issue 45 item 3): the
shipped default's variant, cross-validation by answer, duplicate ids, label counts per
map, the threshold table and --target-precision; on synthetic scored claims whose answer
is known."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from calibration.metrics import pick_threshold, threshold_row, threshold_table
from calibration.three_condition import ThreeConditionCalibrator
from franq.calibrate import resolve_calibrator, stack_key
from franq.cli import main
from franq.errors import InputError
from franq.fit.calibrator_cv import choose_threshold, fold_of, label_check

STACK = stack_key(model="m", faithfulness="verifier", uq_faith="claim_prob", uq_unfaith="parametric", mode="long")
TRUE_SHARE = {"supported": 0.95, "contradicted": 0.1, "not_mentioned": 0.6}


def scored_records(path, n_answers=150, seed=0, shares=(0.6, 0.15, 0.25), duplicate=None):
    """Synthetic `franq score` output of the verifier stack: each claim's condition drawn by
    ``shares``, true with its condition's share, the verifier peaked on the condition, the
    UQ scores higher for true claims."""
    rng = np.random.default_rng(seed)
    conds = list(TRUE_SHARE)
    lines = []
    for i in range(n_answers):
        claims = []
        for _ in range(3):
            k = int(rng.choice(3, p=shares))
            truth = bool(rng.random() < TRUE_SHARE[conds[k]])
            p = rng.dirichlet([1, 1, 1]) * 0.3
            p[k] += 0.7
            claims.append({"claim": {"text": "x", "char_spans": []}, "status": "scored",
                           "p_faithful": float(p[0]), "p_contradicted": float(p[1]), "p_not_mentioned": float(p[2]),
                           "signals": {"log_claim_prob": -abs(float(rng.normal(-1 if truth else -3, 0.7))),
                                       "log_parametric": -abs(float(rng.normal(-2 if truth else -3.5, 1.0)))},
                           "is_true": truth, "is_faithful": k == 0})
        lines.append({"id": f"a{i}", "question": f"q{i}", "answer": "a", "mode": "long", "stack": STACK,
                      "claims": claims})
    if duplicate is not None:
        lines.append(duplicate(lines))
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def fit(tmp_path, *args, src=None):
    src = src or scored_records(tmp_path / "scored.jsonl")
    res = CliRunner().invoke(main, ["fit", "calibrator", str(src), "-o", str(tmp_path / "cal.json"), *args])
    report = json.loads((tmp_path / "cal.report.json").read_text()) if res.exit_code == 0 else None
    return res, report


def test_claims_with_p_contradicted_get_the_three_condition_fit_and_a_cross_validated_report(tmp_path):
    res, report = fit(tmp_path)
    assert res.exit_code == 0, res.output
    assert "fitting the three-condition calibrator" in res.output
    assert ThreeConditionCalibrator.from_json(tmp_path / "cal.json").variant == "soft"  # the better on natural answers
    cv = report["cv"]
    assert cv["folds"] == 5 and cv["n_answers"] == 150 and cv["n_claims"] == 450
    for part in ("calibrated", "raw"):
        for metric in ("ece", "brier", "auroc"):
            point, lo, hi = cv[part][metric]
            assert lo <= point <= hi
    assert cv["calibrated"]["auroc"][0] > 0.8  # the synthetic signals carry the label
    assert cv["calibrated"]["brier"][0] < cv["constant"]["brier"][0]
    assert cv["calibrated"]["ece"][0] < cv["raw"]["ece"][0]
    assert "5-fold cross-validation by answer" in res.output and "precision of likely_false" in res.output
    assert [r["threshold"] for r in cv["thresholds"]] == pytest.approx([k / 10 for k in range(1, 10)])
    check = report["knowledge_check"]  # the knowledge term's ranking, drawn by answer (the synthetic one ranks)
    assert check["answers"] == 150 and check["low"] > 0.5
    assert f"knowledge check: UQ_unfaith ranks the claims its knowledge map is fitted on at AUROC {check['auroc']:.3f}" in res.output
    assert "it carries signal" in res.output
    res, _ = fit(tmp_path, "--binary")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "cal.json").read_text())["format"] != "franq-calibrator-3"


def test_claims_labelled_synthetic_are_left_out_of_the_knowledge_check(tmp_path):
    """A user's generated corruptions (labelled ``synthetic``) are easy for the knowledge term
    to tell apart; the check reads the natural claims, whose term is at chance here."""
    rng = np.random.default_rng(3)
    lines = []
    for i in range(120):
        claims = []
        for j in range(4):
            made = j == 3  # one corruption per answer: false, and far below the natural claims
            truth = False if made else bool(rng.random() < 0.6)
            p = [0.1, 0.1, 0.8]  # the passages mention none of them: the not-mentioned map decides
            claims.append({"claim": {"text": "x", "char_spans": []}, "status": "scored", "p_faithful": p[0],
                           "p_contradicted": p[1], "p_not_mentioned": p[2],
                           "signals": {"log_claim_prob": -1.0, "log_parametric": -9.0 if made else -abs(rng.normal(-3, 1))},
                           "is_true": truth, "condition": "not_mentioned", **({"synthetic": True} if made else {})})
        lines.append({"id": f"a{i}", "question": f"q{i}", "answer": "a", "mode": "long", "stack": STACK,
                      "claims": claims})
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    res, report = fit(tmp_path, "--folds", "0", src=labelled)
    assert res.exit_code == 0, res.output
    check = report["knowledge_check"]
    assert check["claims"] == 360 and report["n_synthetic"] == 120
    assert check["low"] <= 0.5 and "no usable signal" in res.output
    assert "120 claims labelled synthetic left out" in res.output
    unlabelled = tmp_path / "unlabelled.jsonl"  # the same claims without the label: the corruptions make a signal
    unlabelled.write_text(labelled.read_text().replace(', "synthetic": true', ""), encoding="utf-8")
    res, report = fit(tmp_path, "--folds", "0", src=unlabelled)
    assert res.exit_code == 0, res.output
    assert report["knowledge_check"]["claims"] == 480 and report["knowledge_check"]["low"] > 0.5
    assert "labelled synthetic" not in res.output


def test_folds_keep_each_answers_claims_together():
    groups = np.repeat(np.arange(20), 3)
    folds = fold_of(groups, 4, seed=1)
    for g in range(20):
        assert len(set(folds[groups == g])) == 1
    assert sorted(np.bincount(folds)) == [15, 15, 15, 15]
    with pytest.raises(InputError, match="only 3 labelled answer"):
        fold_of(np.arange(3), 5)


def test_a_repeated_id_is_merged_when_identical_and_refused_when_it_differs(tmp_path):
    src = scored_records(tmp_path / "dup.jsonl", duplicate=lambda lines: lines[3])
    res, report = fit(tmp_path, src=src)
    assert res.exit_code == 0, res.output
    assert "1 record(s) repeat an earlier record's id" in res.output and report["n_claims"] == 450

    def other(lines):
        return {**lines[3], "answer": "another answer"}

    src = scored_records(tmp_path / "dup2.jsonl", duplicate=other)
    res, _ = fit(tmp_path, src=src)
    assert res.exit_code != 0 and re.search(r"line 151: id 'a3' repeats \S+ line 4 with another", res.output)


def test_a_map_with_few_labels_is_named_in_a_warning_and_refused_below_the_floor(tmp_path):
    res, report = fit(tmp_path, src=scored_records(tmp_path / "few.jsonl", n_answers=60, shares=(0.8, 0.05, 0.15)))
    assert res.exit_code == 0, res.output
    warned = [w for w in report["warnings"] if w.startswith("T_c, P(true | contradicted): only")]
    assert warned and "about 100 per condition" in warned[0]
    assert "T_c, P(true | contradicted)" in res.output
    with pytest.raises(InputError, match=r"contradicted condition has 4 labelled claims.*--flat contradicted"):
        label_check({"contradicted": {"weight": 4, "true": 1, "false": 3}})
    assert label_check({"contradicted": {"weight": 4}}, flat=("contradicted",)) == []


def test_threshold_table_counts_what_a_threshold_flags():
    p = np.array([0.1, 0.2, 0.3, 0.6, 0.9])
    y = np.array([0, 0, 1, 0, 1])
    row = threshold_row(p, y, 0.5)  # flags 0.1, 0.2, 0.3
    assert (row.precision, row.caught, row.flagged, row.false_alarm) == pytest.approx((2 / 3, 2 / 3, 3 / 5, 1 / 2))
    assert np.isnan(threshold_row(p, y, 0.05).precision)
    assert len(threshold_table(p, y)) == 9


def test_target_precision_finds_the_threshold_a_calibrated_score_implies():
    # P(true) uniform and calibrated: the claims below T are false 1 - T/2 of the time
    rng = np.random.default_rng(0)
    p = rng.uniform(size=40_000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    assert pick_threshold(p, y, target_precision=0.8).threshold == pytest.approx(0.4, abs=0.02)
    # true claims flagged (false alarm) below T: T^2 of them
    assert pick_threshold(p, y, target_false_alarm=0.25).threshold == pytest.approx(0.5, abs=0.02)
    assert pick_threshold(p, y, target_precision=1.0) is None or pick_threshold(p, y, target_precision=1.0).n_flagged


def test_target_precision_is_stored_in_the_calibrator_and_used_as_its_threshold(tmp_path):
    res, report = fit(tmp_path, "--target-precision", "0.7")
    assert res.exit_code == 0, res.output
    chosen = report["cv"]["chosen"]
    assert chosen["target"] == {"precision": 0.7} and chosen["precision"] >= 0.7
    assert chosen["held_out_max_gap"] <= 0.15 and len(chosen["held_out"]) == 5
    assert json.loads((tmp_path / "cal.json").read_text())["threshold"] == chosen["threshold"]
    active, _ = resolve_calibrator(str(tmp_path / "cal.json"), STACK)
    assert active.threshold == chosen["threshold"]
    assert "stored in the calibrator file" in res.output
    assert ("misses its target by" in res.output) == (chosen["held_out_max_gap"] > 0.05)
    few = scored_records(tmp_path / "few.jsonl", n_answers=25, seed=3)  # 75 claims: too few false ones to hold it
    res, report = fit(tmp_path, "--target-precision", "0.7", src=few)
    assert res.exit_code == 0, res.output
    gap = report["cv"]["chosen"]["held_out_max_gap"]
    assert gap > 0.05 and f"warning: the threshold misses its target by {gap:g} on a held-out fold" in res.output
    assert "label more false claims" in res.output
    res, _ = fit(tmp_path, "--target-precision", "0.7", "--target-false-alarm", "0.1")
    assert res.exit_code != 0 and "not both" in res.output
    with pytest.raises(InputError, match="no threshold gives a precision of at least 0.9"):
        choose_threshold(np.array([0.1, 0.9]), np.array([1.0, 0.0]), np.array([0, 1]), target_precision=0.9)


def test_score_uses_the_calibrators_threshold_unless_the_config_sets_one(tmp_path, tiny_lm_path):
    from test_calibrate_cli import FACTS, PASSAGE, _raw_examples

    out = tmp_path / "cal.json"
    res = CliRunner().invoke(main, ["fit", "calibrator", str(_raw_examples(tmp_path / "train.jsonl")), "-o", str(out),
                                    "--model", str(tiny_lm_path), "--faithfulness", "combined", "--folds", "0"])
    assert res.exit_code == 0, res.output
    obj = json.loads(out.read_text())
    args = ["score", "-q", FACTS[0][0], "-p", PASSAGE, "-a", FACTS[0][1], "--model", str(tiny_lm_path),
            "--faithfulness", "combined", "--format", "json", "--calibrator", str(out)]
    first = json.loads(CliRunner().invoke(main, args).output)
    ps = sorted(c["p_true_calibrated"] for c in first["claims"] if c["status"] == "scored")
    assert all(c.get("verdict") is None for c in first["claims"])  # no threshold anywhere: no verdict
    cut = (ps[0] + ps[-1]) / 2 if ps[0] < ps[-1] else ps[0] + 1e-6
    out.write_text(json.dumps({**obj, "threshold": cut}))
    for extra, t in (([], cut), (["--threshold", "0"], 0.0)):
        res = CliRunner().invoke(main, args + extra)
        assert res.exit_code == 0, res.output
        for c in json.loads(res.output)["claims"]:
            if c["status"] == "scored":  # a third verdict ("uncertain") may sit between; never the wrong side
                assert c["verdict"] is not None
                assert c["verdict"] != ("likely_false" if c["p_true_calibrated"] >= t else "likely_true")
