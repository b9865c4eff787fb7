"""`franq calibrate`, `franq score --calibrator` and the pipeline's use of calibrators,
driven through the real CLI entry point with the tiny test model."""
from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import franq

from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from conftest import GOOD, make_franq
from franq.calibrate import resolve_calibrator, stack_key
from franq.fit.training_claims import training_claims
from franq.cli import main
from franq.errors import InputError
from franq.results import read_results

FACTS = [
    ("Where is the Eiffel Tower?", "The Eiffel Tower is in Paris. It was built from 1887 to 1889.", True),
    ("Who designed the tower?", "Gustave Eiffel designed the tower. He was a French civil engineer.", True),
    ("What is the capital of France?", "Paris is the capital of France. Lyon is a large city.", True),
    ("When was the tower built?", "The tower was built in 1950. It is made of wood.", False),
    ("Which cities are in France?", "Zürich is a French city. Marseille is a large French city.", False),
]
PASSAGE = ("The Eiffel Tower is a wrought-iron lattice tower in Paris, France, built from 1887 to 1889. "
           "Gustave Eiffel was a French civil engineer. Paris is the capital of France.")


def _raw_examples(path, n_repeat=8):
    rng = np.random.default_rng(0)
    with open(path, "w", encoding="utf-8") as f:
        for r in range(n_repeat):
            for i, (q, a, ok) in enumerate(FACTS):
                first, second = a.split(". ", 1)
                claims = [{"text": first + ".", "is_true": bool(ok or rng.random() < 0.3),
                           "is_faithful": bool(ok) if r % 2 else None},
                          {"text": second, "is_true": bool(rng.random() < 0.7), "is_faithful": None}]
                f.write(json.dumps({"id": f"{r}-{i}", "question": q, "passages": [PASSAGE], "answer": a,
                                    "claims": claims}) + "\n")
    return path


@pytest.fixture(scope="module")
def fitted(tmp_path_factory, tiny_lm_path):
    d = tmp_path_factory.mktemp("calib")
    raw = _raw_examples(d / "train.jsonl")
    out = d / "cal.json"
    res = CliRunner().invoke(main, ["fit", "calibrator", str(raw), "-o", str(out), "--model", str(tiny_lm_path),
                                    "--faithfulness", "combined", "--min-per-condition", "5"])
    assert res.exit_code == 0, res.output
    return d, out, res


def test_calibrate_scores_raw_examples_then_writes_calibrator_and_report(fitted):
    d, out, res = fitted
    cal = FranqCalibrator.from_json(out)
    assert cal.variant == "condition"
    assert cal.fitted_for["faithfulness"] == "combined-v1" and cal.fitted_for["mode"] == "long"
    report = json.loads((d / "cal.report.json").read_text())
    assert report["n_claims"] == 80 and report["file_bytes"] == out.stat().st_size
    assert report["counts"]["split"]["gold"] == 20
    assert set(report["train_ece"]) == {"before", "after"}
    assert "train ECE" in res.output and (d / "cal.scored.jsonl").is_file()


def test_calibrate_accepts_scored_output_and_gives_same_calibrator(fitted, tmp_path):
    d, out, _ = fitted
    again = tmp_path / "again.json"
    res = CliRunner().invoke(main, ["fit", "calibrator", str(d / "cal.scored.jsonl"), "-o", str(again),
                                    "--min-per-condition", "5"])
    assert res.exit_code == 0, res.output
    assert json.loads(again.read_text()) == json.loads(out.read_text())


def test_score_with_calibrator_applies_it_and_keeps_raw_values(fitted, tiny_lm_path):
    _, out, _ = fitted
    args = ["score", "-q", FACTS[0][0], "-p", PASSAGE, "-a", FACTS[0][1], "--model", str(tiny_lm_path),
            "--faithfulness", "combined", "--format", "json"]
    raw = json.loads(CliRunner().invoke(main, args).output)
    res = CliRunner().invoke(main, args + ["--calibrator", str(out)])
    assert res.exit_code == 0, res.output
    rec = json.loads(res.output)
    assert raw["calibrator"] is None and "calibration" not in raw  # one name for it: calibrator.variant
    assert rec["calibrator"]["variant"] == "condition"
    assert rec["calibrator"]["path"] == str(out.resolve()) and rec["calibrator"]["source"] == "user"
    cal = FranqCalibrator.from_json(out)
    scored = [(c, r) for c, r in zip(rec["claims"], raw["claims"]) if r["status"] == "scored"]
    assert scored
    for c, r in scored:
        for key in ("p_true_raw", "p_faithful", "uq_faith", "uq_unfaith"):
            assert c[key] == pytest.approx(r[key])  # the calibrator leaves the raw values alone
        assert c["signals"] == pytest.approx(r["signals"])
        assert r["p_true_calibrated"] is None
        assert c["p_true_calibrated"] == pytest.approx(cal.predict(ClaimInputs([r["p_faithful"]], [r["uq_faith"]],
                                                                               [r["uq_unfaith"]]))[0])


def test_a_prior_at_score_time_moves_p_true_as_fit_prior_does_and_the_results_say_so(fitted, tiny_lm_path, tmp_path):
    """`franq score --prior P` (calibration.prior) gives the calibrated values of the file `franq
    fit prior --prior P` writes, leaves the raw values alone, and the record, the table, the CSV,
    the report, a read-back result and the pipeline's components name the share."""
    _, out, _ = fitted
    res = CliRunner().invoke(main, ["fit", "prior", str(out), "--prior", "0.95", "-o", str(tmp_path / "moved.json")])
    assert res.exit_code == 0, res.output
    args = ["score", "-q", FACTS[3][0], "-p", PASSAGE, "-a", FACTS[3][1], "--model", str(tiny_lm_path),
            "--faithfulness", "combined"]
    plain, told, moved = (json.loads(CliRunner().invoke(main, [*args, "--format", "json", *more]).output) for more in
                          (["--calibrator", str(out)], ["--calibrator", str(out), "--prior", "0.95"],
                           ["--calibrator", str(tmp_path / "moved.json")]))
    assert plain["calibrator"]["prior"] is None and told["calibrator"]["prior"] == moved["calibrator"]["prior"] == 0.95
    assert told["calibrator"]["path"] == str(out.resolve())
    scored = [i for i, c in enumerate(plain["claims"]) if c["status"] == "scored"]
    assert scored
    for i in scored:
        p, t, m = plain["claims"][i], told["claims"][i], moved["claims"][i]
        assert t["p_true_calibrated"] == pytest.approx(m["p_true_calibrated"]) and t["p_true_raw"] == p["p_true_raw"]
        assert t["p_true_calibrated"] > p["p_true_calibrated"]  # told more claims are true than it was fitted on
    line = tmp_path / "told.jsonl"
    line.write_text(json.dumps(told) + "\n", encoding="utf-8")
    assert next(read_results(line)).calibrator.prior == 0.95
    report = CliRunner().invoke(main, ["report", str(line), "-o", str(tmp_path / "told.html")])
    assert report.exit_code == 0 and "moved to prior 0.95" in (tmp_path / "told.html").read_text(encoding="utf-8")
    legacy = {**told, "calibrator": {k: v for k, v in told["calibrator"].items() if k != "prior"}}
    line.write_text(json.dumps(legacy) + "\n", encoding="utf-8")  # written before results recorded a prior
    assert next(read_results(line)).calibrator.prior is None
    table = CliRunner().invoke(main, [*args, "--calibrator", str(out), "--prior", "0.95"])
    assert table.exit_code == 0 and "moved to a share of true claims of 0.95" in table.output
    csv = CliRunner().invoke(main, [*args, "--calibrator", str(out), "--prior", "0.95", "--format", "csv"])
    assert csv.exit_code == 0 and f"{out.resolve()} moved to prior 0.95" in csv.output  # its `calibrator` column
    pipeline = franq.Franq.from_config(franq.FranqConfig.from_dict({
        "model": {"path": str(tiny_lm_path)}, "faithfulness": {"name": "combined"},
        "calibration": {"calibrator": str(out), "prior": 0.95}}))
    assert pipeline.components["long"]["calibrator_prior"] == "0.95"  # what /health shows beside the file
    assert pipeline.score(FACTS[3][0], [PASSAGE], FACTS[3][1]).calibrator.prior == 0.95


def test_a_prior_franq_cannot_apply_is_refused_in_one_line(fitted, tiny_lm_path):
    from franq.calibrate import move_to_prior
    from franq.config import FranqConfig

    for bad in (0, 1, 1.5, True, "0.9"):
        with pytest.raises(InputError, match="config 'calibration.prior': expected a (share of true claims|number)"):
            FranqConfig.from_dict({"calibration": {"prior": bad}})
    res = CliRunner().invoke(main, ["score", "--example", "--prior", "1"])
    assert res.exit_code == 2 and "--prior" in res.output and "expected a finite number in (0, 1)" in res.output
    rec = json.loads(CliRunner().invoke(main, [
        "score", "-q", FACTS[0][0], "-p", PASSAGE, "-a", FACTS[0][1], "--model", str(tiny_lm_path), "--faithfulness",
        "combined", "--format", "json", "--calibrator", "none", "--prior", "0.9"]).output)
    assert rec["calibrator"] is None  # nothing to move: said, not silently dropped
    assert any(w.startswith("calibration.prior 0.9 not applied: no calibrator applies") for w in rec["warnings"])

    class Boosted:
        name = "xgboost"

    with pytest.raises(InputError, match=r"calibrator x\.json: a new base rate moves the maps of a FRANQ calibrator"):
        move_to_prior(Boosted(), 0.9, "x.json")
    _, out, _ = fitted
    cal = FranqCalibrator.from_json(out)
    move_to_prior(cal, 0.9, out)
    move_to_prior(cal, 0.7, out)  # a share given again replaces the one before
    assert cal.prior == 0.7


def test_mismatched_calibrator_warns_and_is_not_applied_or_refuses(fitted, tiny_lm_path, tmp_path):
    _, out, _ = fitted
    obj = json.loads(out.read_text())
    obj["fitted_for"]["faithfulness"] = "alignscore-large"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(obj))
    args = ["score", "-q", FACTS[0][0], "-p", PASSAGE, "-a", FACTS[0][1], "--model", str(tiny_lm_path),
            "--faithfulness", "combined", "--format", "json", "--calibrator", str(other)]
    rec = json.loads(CliRunner().invoke(main, args).output)
    assert rec["calibrator"] is None
    assert all(c["p_true_calibrated"] is None for c in rec["claims"])
    assert any("NOT applied" in w and "faithfulness: fitted for 'alignscore-large', running 'combined-v1'" in w
               for w in rec["warnings"])
    res = CliRunner().invoke(main, args + ["--calibrator-mismatch", "error"])
    assert res.exit_code != 0 and "fitted for another stack" in res.output
    rec = json.loads(CliRunner().invoke(main, args + ["--calibrator-mismatch", "force"]).output)
    assert rec["calibrator"]["variant"] == "condition" and any("applied although" in w for w in rec["warnings"])
    assert rec["calibrator"]["fitted_for"]["faithfulness"] == "alignscore-large"


def test_default_calibrator_is_skipped_silently_for_another_stack():
    stack = stack_key(model="some/other-model", faithfulness="lexical-v1", uq_faith="claim_prob",
                      uq_unfaith="parametric", mode="long")
    assert resolve_calibrator("default", stack) == (None, ())


def test_shipped_default_calibrator_matches_the_embedded_stack_key():
    from franq.calibrate import load_calibrator, shipped_calibrators
    from franq.lm.load import EMBEDDED_NAME

    paths = shipped_calibrators()
    if not paths:
        pytest.skip("no franq/data/calibrator-*.json shipped yet: run franq fit shipped --in-place")
    stack = stack_key(model=EMBEDDED_NAME, faithfulness="combined-v1", uq_faith="claim_prob",
                      uq_unfaith="parametric", mode="long")
    active, warnings = resolve_calibrator("default", stack)
    assert active is not None and not warnings
    assert all(load_calibrator(p).fitted_for["prompt_version"] for p in paths)


def test_calibrate_without_labels_is_a_clear_error(fitted, tmp_path):
    d, _, _ = fitted
    lines = [json.loads(x) for x in (d / "cal.scored.jsonl").read_text().splitlines()]
    for rec in lines:
        for c in rec["claims"]:
            c["is_true"] = None
    path = tmp_path / "unlabelled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    res = CliRunner().invoke(main, ["fit", "calibrator", str(path), "-o", str(tmp_path / "c.json")])
    assert res.exit_code != 0 and "no scored claims labelled 'is_true'" in res.output


def test_training_claims_refuse_mixed_stacks_of_labelled_records_and_skip_unlabelled_ones():
    stack = stack_key(model="a", faithfulness="f", uq_faith="claim_prob", uq_unfaith="parametric", mode="long")
    claim = {"claim": {"text": "x", "char_spans": []}, "status": "scored", "p_faithful": 0.5,
             "signals": {"log_claim_prob": -1.0, "log_parametric": -2.0}, "is_true": True}
    rec = {"question": "q", "answer": "a", "mode": "long", "stack": stack, "claims": [claim]}
    with pytest.raises(InputError, match="line 2: scored by another stack.*model: 'a' vs 'b'"):
        training_claims(read_results([rec, {**rec, "stack": {**stack, "model": "b"}}], with_input=True))
    short = {**rec, "stack": {**stack, "mode": "observer"}}
    with pytest.raises(InputError, match=r"line 2: .*mode: 'long' vs 'observer'.*\(--preset NAME"):
        training_claims(read_results([rec, short], with_input=True))
    unlabelled = {**short, "claims": [{**claim, "is_true": None}]}  # e.g. a short answer of --mode auto output
    got = training_claims(read_results([unlabelled, rec, unlabelled], with_input=True))
    assert len(got) == 1 and got.stack["mode"] == "long" and got.skipped["unlabelled"] == 2


def test_calibrate_xgboost_baseline_writes_xgboost_json_usable_by_score(fitted, tiny_lm_path, tmp_path):
    pytest.importorskip("xgboost")
    d, _, _ = fitted
    out = tmp_path / "xgb.json"
    res = CliRunner().invoke(main, ["fit", "calibrator", str(d / "cal.scored.jsonl"), "-o", str(out), "--xgboost", "franq"])
    assert res.exit_code == 0, res.output
    assert "learner" in json.loads(out.read_text())
    rec = json.loads(CliRunner().invoke(main, [
        "score", "-q", FACTS[0][0], "-p", PASSAGE, "-a", FACTS[0][1], "--model", str(tiny_lm_path),
        "--faithfulness", "combined", "--format", "json", "--calibrator", str(out)]).output)
    assert rec["calibrator"]["variant"] == "xgboost"
    assert all(0 <= c["p_true_calibrated"] <= 1 for c in rec["claims"] if c["status"] == "scored")


def test_calibrate_xgboost_without_xgboost_says_which_extra_to_install(fitted, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "xgboost", None)  # `import xgboost` raises ImportError
    d, _, _ = fitted
    res = CliRunner().invoke(main, ["fit", "calibrator", str(d / "cal.scored.jsonl"), "-o", str(tmp_path / "xgb.json"),
                                    "--xgboost", "franq"])
    assert res.exit_code == 1 and res.exception.__class__ is SystemExit
    assert res.output.strip().splitlines() == [
        "Error: the XGBoost baselines need the xgboost package, which is not installed: pip install 'franq[eval]'"]


def test_missing_calibrator_file_is_an_input_error(tmp_path):
    stack = stack_key(model="m", faithfulness="f", uq_faith="a", uq_unfaith="b", mode="long")
    with pytest.raises(InputError, match="cannot read"):
        resolve_calibrator(str(tmp_path / "nope.json"), stack)


def test_direct_franq_construction_is_uncalibrated_unless_asked(tiny_lm, make_franq, constant_faithfulness,
                                                                fitted):
    from franq.config import FranqConfig
    from franq.pipeline import Franq

    _, out, _ = fitted
    # the default setting picks a shipped calibrator only for its exact stack: none for the tiny model
    plain = Franq(FranqConfig(), tiny_lm, faithfulness=constant_faithfulness(0.7))
    assert plain.config.calibration.calibrator == "default" and plain.preset("long").calibrator is None
    assert plain.components["long"]["calibrator"] == "none"
    # fitted for combined-v1: with another backend it is not applied, and the results say so
    other = make_franq(tiny_lm, {"calibration": {"calibrator": str(out)}}, faithfulness=constant_faithfulness(0.7))
    res = other.score(FACTS[0][0], [PASSAGE], FACTS[0][1])
    assert res.calibration == "none" and res.calibrator is None
    assert any("faithfulness: fitted for 'combined-v1'" in w for w in res.warnings)


@pytest.mark.embedded
def test_embedded_stack_prints_calibrated_probabilities_out_of_the_box():
    from franq.calibrate import shipped_calibrators

    if not shipped_calibrators():
        pytest.skip("no franq/data/calibrator-*.json shipped yet: run franq fit shipped --in-place")
    res = CliRunner().invoke(main, ["score", "--example"])
    assert res.exit_code == 0, res.output
    assert "shipped file franq/data/calibrator-" in res.output
    rec = json.loads(CliRunner().invoke(main, ["score", "--example", "--format", "json"]).output)
    assert rec["calibrator"]["variant"] == "three-condition" and rec["calibrator"]["source"] == "shipped"
    assert rec["calibrator"]["fitted_for"] == rec["stack"]
    scored = [c for c in rec["claims"] if c["status"] == "scored"]
    assert scored and all(c["p_true_raw"] is not None and c["p_true_calibrated"] is not None for c in scored)


def test_training_claims_read_records_of_this_schema_and_the_previous_ones_alike():
    stack = stack_key(model="m", faithfulness="combined-v1", uq_faith="claim_prob", uq_unfaith="parametric",
                      mode="long")
    claim = {"claim": {"text": "A fact.", "char_spans": [[0, 7]]}, "status": "scored", "p_faithful": 0.6,
             "p_true_raw": 0.3, "p_true_calibrated": 0.9,
             "signals": {"log_claim_prob": -1.0, "n_tokens": 3.0, "log_parametric": -2.0},
             "is_true": True, "is_faithful": None}
    new = {"schema": 2, "question": "q", "answer": "A fact.", "mode": "long", "stack": stack, "claims": [claim]}
    # franq 0.1: no schema field, model / faithfulness / calibration beside the stack, p_supported = p_faithful
    previous = {"question": "q", "answer": "A fact.", "model": "m", "faithfulness": "combined-v1", "mode": "long",
                "stack": stack, "calibration": "none", "claims": [{**claim, "p_supported": 0.6}]}
    # older still: no stack, signals under "components" next to derived values, p_faithful possibly calibrated
    old = {"question": "q", "answer": "A fact.", "model": "m", "faithfulness": "combined-v1", "mode": "long",
           "claims": [{"claim": {"text": "A fact.", "char_spans": [[0, 7]]}, "status": "scored", "p_faithful": 0.8,
                       "p_true": 0.9,
                       "components": {"log_claim_prob": -1.0, "n_tokens": 3.0, "log_parametric": -2.0,
                                      "p_faithful_raw": 0.6, "p_true_raw": 0.3, "claim_prob": 0.37},
                       "is_true": True}]}
    read = [training_claims(read_results([rec], with_input=True)) for rec in (new, previous, old)]
    for data in read:
        assert data.stack == stack
        assert data.p_faithful.tolist() == [0.6]  # the raw value, never a calibrated one
        np.testing.assert_allclose(data.uq_faith, [np.exp(-1.0)])
        np.testing.assert_allclose(data.uq_unfaith, [np.exp(-2.0)])
        assert sorted(data.signals) == ["log_claim_prob", "log_parametric", "n_tokens"]


def test_missing_calibrator_says_calibrator_once(tmp_path):
    stack = stack_key(model="m", faithfulness="f", uq_faith="a", uq_unfaith="b", mode="long")
    with pytest.raises(franq.InputError) as exc:
        resolve_calibrator(str(tmp_path / "nope.json"), stack)
    assert str(exc.value).startswith(f"calibrator: cannot read {tmp_path / 'nope.json'}")
    assert "calibrator: calibrator" not in str(exc.value)


def test_a_scored_output_with_passages_is_still_read_as_scored_by_calibrate(tiny_lm):
    from franq.fit.training_claims import is_scored_record

    result = make_franq(tiny_lm).score_many([GOOD])[0]
    assert is_scored_record(franq.result_record("x", result, franq.Example.from_dict(GOOD)))
    assert not is_scored_record(GOOD)


def _scored_records(path, n_answers=40, seed=0):
    rng = np.random.default_rng(seed)
    stack = stack_key(model="m", faithfulness="lexical-v1", uq_faith="claim_prob", uq_unfaith="parametric", mode="long")
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n_answers):
            claims = []
            for _ in range(3):
                truth = bool(rng.random() < 0.6)
                claims.append({"claim": {"text": "x", "char_spans": []}, "status": "scored",
                               "p_faithful": float(rng.uniform(0.4, 1) if truth else rng.uniform(0, 0.6)),
                               "signals": {"log_claim_prob": -abs(float(rng.normal(-0.5 if truth else -3, 1))),
                                           "log_parametric": -abs(float(rng.normal(-2, 1)))}, "is_true": truth})
            f.write(json.dumps({"id": str(i), "question": "q", "answer": "a", "mode": "long", "model": "m",
                                "faithfulness": "lexical-v1", "stack": stack, "claims": claims}) + "\n")
    return path


def test_calibrate_holdout_reports_held_apart_ece_and_auroc(tmp_path):
    src = _scored_records(tmp_path / "scored.jsonl")
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(main, ["fit", "calibrator", str(src), "-o", str(out), "--holdout", "0.25",
                                    "--min-per-condition", "5"])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "cal.report.json").read_text())
    h = report["holdout"]
    assert h["n_answers"] == 10 and h["n_claims"] == 30 and report["n_claims"] == 90  # split by answer
    for part in ("raw", "calibrated"):
        assert 0 <= h[part]["ece"] <= 1 and 0 <= h[part]["auroc"] <= 1
    assert h["raw"]["auroc"] > 0.6  # the synthetic signals carry the label
    assert re.search(r"held-apart ECE: raw \d\.\d{4}, calibrated \d\.\d{4}", res.output)
    assert "held-apart AUROC" in res.output
    assert FranqCalibrator.from_json(out).variant == "condition"
    res = CliRunner().invoke(main, ["fit", "calibrator", str(_scored_records(tmp_path / "two.jsonl", n_answers=1)),
                                    "-o", str(tmp_path / "c2.json"), "--holdout", "0.2"])
    assert res.exit_code != 0 and "cannot be split" in res.output


def test_a_list_of_calibrators_gives_each_stack_the_first_fitted_for_it(tmp_path):
    """``mine.json,default``: the user's file where it was fitted for the stack, the shipped
    one elsewhere (the fast mode's short answers, --mode auto's short form); none fitting is
    the single file's warn / error, and force needs one file."""
    import numpy as np

    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator
    from franq.calibrate import default_calibrator_path, shipped_calibrators

    fast_short = json.loads(
        next(p for p in shipped_calibrators() if p.name == "calibrator-fast_short-verifier.json").read_text())
    fast = dict(fast_short["fitted_for"], mode="fast")
    short = dict(fast_short["fitted_for"])
    assert default_calibrator_path(short) is not None
    mine = tmp_path / "mine.json"
    y = np.array([1.0, 0.0] * 20)
    FranqCalibrator(variant="none", calibrate_faithfulness=True, fitted_for=fast).fit(
        ClaimInputs(np.linspace(0.1, 0.9, 40), np.ones(40), np.zeros(40)), y, is_faithful=y).to_json(mine)
    active, _ = resolve_calibrator(f"{mine}, default", fast)  # (a toy map: its collapse warning aside)
    assert active.info.source == "user" and active.info.path == str(mine.resolve())
    active, warnings = resolve_calibrator(f"{mine},default", short)
    assert active.info.source == "shipped" and active.info.path.endswith("calibrator-fast_short-verifier.json")
    assert resolve_calibrator(str(mine), short)[0] is None  # one file: not applied, as before
    other = stack_key(model="m", faithfulness="f", uq_faith="a", uq_unfaith="b", mode="long")
    active, warnings = resolve_calibrator(f"{mine},default", other)
    assert active is None and "NOT applied" in warnings[0] and str(mine) in warnings[0]
    with pytest.raises(InputError, match="fitted for another stack"):
        resolve_calibrator(f"{mine},default", other, on_mismatch="error")
    with pytest.raises(InputError, match="none of the calibrators"):
        resolve_calibrator(f"{mine},{mine}", other, on_mismatch="error")
    with pytest.raises(InputError, match="'force' applies one file"):
        resolve_calibrator(f"{mine},{mine}", other, on_mismatch="force")
    with pytest.raises(InputError, match="'none' cannot be listed"):
        resolve_calibrator(f"{mine},none", fast)
    with pytest.raises(InputError, match="cannot read"):
        resolve_calibrator(f"default,{tmp_path / 'nope.json'}", other)
    comma = tmp_path / "fast,v2.json"  # a file named whole is one file, the comma in its name included
    comma.write_bytes(mine.read_bytes())
    active, _ = resolve_calibrator(str(comma), fast)
    assert active.info.source == "user" and active.info.path == str(comma.resolve())
