"""Which calibrator should the probe preset ship for the verifier stack (issue 45 item 5)?
The probe preset (semantic entropy probes on two teacher-forced passes, no samples) scored
with the shipped verifier on the distractor pairs of nq-open train questions 1-150 (answers
the embedded model did not write, half true); the same fits and the same rule as the
observer preset's (experiments/2026-11-28-observer-calibrator-variants, imported), held out
on two sets: the distractor pairs of test questions 1-100, and the embedded model's own
attempted greedy answers to test questions 1-200 (clean passage lists), which is how
`franq answer --mode short` with the probe preset uses it.

    OMP_NUM_THREADS=1 FRANQ_RAW_DATA=<shared/data/raw> python experiments/2026-11-29-probe-verifier-calibrator/run.py \
        --cache $OUT/probe-pairs.json --out experiments/2026-11-29-probe-verifier-calibrator/result.md
"""
from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "observer_variants", ROOT / "experiments" / "2026-11-28-observer-calibrator-variants" / "run.py")
obs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(obs)
OWN_TEST = 200


def as_set(claims, y, questions) -> dict:
    return {**{f: [float(getattr(c, f)) for c in claims] for f in obs.FIELDS}, "is_true": [float(v) for v in y],
            "question": list(questions)}


def pairs(split: str, n: int, lm) -> dict:
    from franq.evaluation.data import raw_data_dir
    from franq.fit.shipped_calibrators import distractor_pairs
    from franq.fit.shipped_pairs import pairs_scored

    listed = distractor_pairs(ROOT / "datasets", raw_data_dir(None), n, split)
    _, claims, y = pairs_scored(ROOT / "datasets", None, n, preset="probe", split=split, lm=lm)
    if len(claims) != len(listed):
        raise SystemExit(f"{split}: {len(listed) - len(claims)} answers not scored; the question groups would shift")
    return as_set(claims, y, [it.question for it, *_ in listed])


def own_answers(n: int, lm) -> dict:
    """The embedded model's attempted greedy answers (committed samples) to the first ``n``
    test questions, clean passage lists, through the probe preset with the verifier."""
    from franq.config import FranqConfig
    from franq.evaluation.common import attempted, is_correct
    from franq.fit.generations import short_observed
    from franq.fit.shipped_verifier import verifier_backend
    from franq.io import Example
    from franq.lm.load import EMBEDDED_NAME
    from franq.pipeline import Franq

    rows, _ = short_observed(ROOT / "datasets", EMBEDDED_NAME, "test", n, ("clean",))
    kept = [(it, rec["greedy"]["text"]) for it, rec, _ in rows if attempted(rec["greedy"]["text"])]
    config = FranqConfig.from_dict({"mode": "short", "uq": {"short_scoring": "probe"},
                                    "calibration": {"calibrator": "none"}})
    fr = Franq(config, lm, faithfulness=verifier_backend(None))
    scores = fr.score_many([Example(it.question, it.passages, a) for it, a in kept])
    ok = [(s.claims[0], is_correct(a, it.answers), it.question) for s, (it, a) in zip(scores, kept)
          if s.claims and s.claims[0].status == "scored"]
    return as_set([c for c, _, _ in ok], [y for _, y, _ in ok], [q for *_, q in ok])


def moved_to_own(train: dict, own: dict) -> dict:
    """The soft fit moved to the own answers' base rate: the known share (labels read), and
    the EM estimate from their unlabelled scores (Saerens et al. 2002, as `franq fit prior`)."""
    from calibration.prior import em_prior
    from calibration.three_condition import ThreeConditionCalibrator

    cal = ThreeConditionCalibrator(variant="soft").fit(obs.inputs(train), np.asarray(train["is_true"]))
    x, y = obs.inputs(own), np.asarray(own["is_true"], dtype=float)

    def at(prior):
        cal.prior = prior
        return cal.predict(x)
    em, _ = em_prior(at, cal.base_rate)
    return {name: (prior, obs.metrics(at(prior), y)) for name, prior in
            (("the known share (labels)", float(y.mean())), ("EM on the unlabelled own answers", em))}


def main() -> None:
    from franq.fit.shipped_pairs import OBSERVER_TEST, OBSERVER_TRAIN

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, required=True, help="The scored sets (written on the first run).")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.cache.is_file():
        sets = json.loads(args.cache.read_text())
    else:
        import torch

        from franq.lm import CausalLM

        torch.set_num_threads(1)
        lm = CausalLM.load(device="cpu")
        sets = {"train": pairs("train", OBSERVER_TRAIN, lm), "test": pairs("test", OBSERVER_TEST, lm),
                "own": own_answers(OWN_TEST, lm)}
        args.cache.write_text(json.dumps(sets))
    train = sets["train"]
    kinds = {**obs.VARIANTS, **obs.ADDED}
    rows = {name: {"cv": obs.cv(train, kw)} for name, kw in kinds.items()}
    ship_auc = rows["shipped: soft, step prior 1"]["cv"]["auroc"]
    eligible = [n for n, r in rows.items() if r["cv"]["auroc"] >= ship_auc - obs.AUROC_SLACK]
    chosen = min(eligible, key=lambda n: rows[n]["cv"]["ece"])
    for name, kw in kinds.items():  # the held-out sets, read after the choice
        model = obs.fit(train, kw)
        for held in ("test", "own"):
            s = sets[held]
            rows[name][held] = obs.metrics(model.predict(obs.subset(s, slice(None))),
                                           np.asarray(s["is_true"], dtype=float))
    moved = moved_to_own(train, sets["own"])
    from franq.fit.natural import raw3

    raw = {h: obs.metrics(raw3(obs.subset(sets[h], slice(None))), np.asarray(sets[h]["is_true"], dtype=float))
           for h in ("test", "own")}
    fmt = lambda m: f"{m['ece']:.3f} ({m['floor'][0]:.3f}) | {m['brier']:.4f} | {m['auroc']:.3f}"
    describe = lambda s: (f"{len(s['is_true'])} answers of {len(set(s['question']))} questions "
                          f"({np.mean(s['is_true']):.2f} true, constant Brier "
                          f"{np.mean(s['is_true']) * (1 - np.mean(s['is_true'])):.4f})")
    lines = [(f"Train: distractor pairs, {describe(train)}. Held out: distractor pairs of test questions, "
             f"{describe(sets['test'])}; the model's own greedy answers, {describe(sets['own'])}. Rule (fixed "
             f"before reading the held-out sets, as for the observer): the lowest CV ECE among the fits whose CV "
             f"AUROC is at most {obs.AUROC_SLACK} below the soft fit's. Chosen: **{chosen}**."), "",
             "ECE (in brackets its floor: what a calibrated P with the same values shows, median), Brier, AUROC:", "",
             ("| fit | CV ECE | CV Brier | CV AUROC | pairs ECE | pairs Brier | pairs AUROC | own ECE | own Brier | "
             "own AUROC |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name}{' (chosen)' if name == chosen else ''} | {fmt(r['cv'])} | {fmt(r['test'])} | "
                     f"{fmt(r['own'])} |")
    lines.append(f"| raw three-condition mix, uncalibrated | | | | {fmt(raw['test'])} | {fmt(raw['own'])} |")
    lines += ["", ("The chosen fit moved to the own answers' share of true answers (`franq fit prior`; after the choice, "
              "own answers only):"), "", "| moved to | prior | own ECE | own Brier | own AUROC |", "|---|---|---|---|---|"]
    for name, (prior, m) in moved.items():
        lines.append(f"| {name} | {prior:.3f} | {fmt(m)} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
