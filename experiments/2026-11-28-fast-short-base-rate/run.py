"""The fast_short map of P_supported fitted on the embedded model's nq-open answers (9% true,
shipped) or on those answers beside each question's gold answer (a good answerer's short
answer; about 55% true): calibration on nq-open test read as the model answered, as the gold
answers, and mixed; each map moved to the set's share by EM from its unlabelled claims.

    OMP_NUM_THREADS=1 python experiments/2026-11-28-fast-short-base-rate/run.py > result.txt
"""
import sys
from pathlib import Path

import numpy as np

from calibration.contract import ClaimInputs
from calibration.metrics import brier_score, expected_calibration_error
from franq.evaluation.common import auroc
from franq.fit import shipped_fast as sf
from franq.fit.generations import short_observed
from franq.lm.load import EMBEDDED_NAME

D = Path("datasets").resolve()


def gold_rows(split, n, variants=("clean", "corrupted")):
    rows, _ = short_observed(D, EMBEDDED_NAME, split, n, variants)
    return [({"question": it.question, "passages": [p.text for p in it.passages], "answer": it.answers[0]}, True)
            for it, rec, _ in rows]


def model_rows(split, n, variants):
    from franq.evaluation.common import attempted, is_correct
    rows, _ = short_observed(D, EMBEDDED_NAME, split, n, variants)
    out = []
    for it, rec, _ in rows:
        text = rec["greedy"]["text"]
        if attempted(text):
            out.append(({"question": it.question, "passages": [p.text for p in it.passages], "answer": text},
                        bool(is_correct(text, it.answers))))
    return out


fr = sf.fast_franq()
sets = {}
for split, n in (("train", sf.NQ_TRAIN), ("test", sf.NQ_TEST)):
    model = sf.labelled_sets(D, [f"nq-open-{split}"])[f"nq-open-{split}"]
    sets[f"{split}-model"] = sf.scored_claims(fr, model)
    sets[f"{split}-gold"] = sf.scored_claims(fr, gold_rows(split, n))
    for k in ("train-model", "train-gold", "test-model", "test-gold"):
        if k.startswith(split):
            a = sets[k]
            print(f"{k}: {len(a['y'])} claims, presets {dict(zip(*np.unique(a['preset'], return_counts=True)))}, "
                  f"true {a['y'].mean():.3f}, mean P_s {a['p'].mean():.3f}", file=sys.stderr)


def short(a):
    keep = a["preset"] == "fast_short"
    return {k: v[keep] for k, v in a.items()}


def join(*parts):
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


sets["test-model-clean"] = sf.scored_claims(fr, model_rows("test", sf.NQ_TEST, ("clean",)))
sets["test-gold-clean"] = sf.scored_claims(fr, gold_rows("test", sf.NQ_TEST, ("clean",)))
S = {k: short(v) for k, v in sets.items()}
S["test-mixed-clean"] = join(S["test-model-clean"], S["test-gold-clean"])
S["test-mixed"] = join(S["test-model"], S["test-gold"])
S["train-mixed"] = join(S["train-model"], S["train-gold"])
stack = fr.preset("fast_short").stack


def fit(a):
    from calibration.franq import FranqCalibrator
    n = len(a["y"])
    cal = FranqCalibrator(variant="none", calibrate_faithfulness=True, fitted_for=dict(stack))
    return cal.fit(ClaimInputs(a["p"], np.ones(n), np.zeros(n)), a["y"], is_faithful=a["y"])


def predict(cal, p):
    n = len(p)
    return cal.predict(ClaimInputs(p, np.ones(n), np.zeros(n)))


def em_moved(q, train_share):
    """``q`` moved to the share EM (Saerens et al. 2002) estimates from ``q`` itself, unlabelled."""
    from calibration.prior import em_prior_of, logit_shift, shift_probabilities
    est, _ = em_prior_of(q, train_share)
    return shift_probabilities(q, logit_shift(train_share, est)), est


print("| fit on | claims (true) | eval set | claims | share true | ECE | Brier | Brier of the base rate | AUROC | EM estimate | ECE moved by EM | Brier moved |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
maps = {"model answers (shipped)": S["train-model"], "model + gold answers": S["train-mixed"]}
fitted = {}
for name, tr in maps.items():
    cal = fitted[name] = fit(tr)
    for ev in ("test-model", "test-gold", "test-mixed", "test-mixed-clean"):
        a = S[ev]; q = predict(cal, a["p"]); y = a["y"]
        au = auroc(q, y) if 0 < y.mean() < 1 else float("nan")
        m, est = em_moved(q, float(tr["y"].mean()))
        print(f"| {name} | {len(tr['y'])} ({tr['y'].mean():.2f}) | {ev} | {len(y)} | {y.mean():.3f} | "
              f"{expected_calibration_error(q, y):.3f} | {brier_score(q, y):.3f} | {y.var():.3f} | {au:.3f} | "
              f"{est:.3f} | {expected_calibration_error(m, y):.3f} | {brier_score(m, y):.3f} |")

print("\nAUROC of raw P_s, model vs gold answers of test")
a = S["test-mixed"]
print(f"P_s on test-mixed: AUROC {auroc(a['p'], a['y']):.3f}")
a = S["test-mixed-clean"]
print(f"P_s on test-mixed-clean (gold passage in the list): AUROC {auroc(a['p'], a['y']):.3f}, "
      f"mean P_s gold {S['test-gold-clean']['p'].mean():.3f}, model {S['test-model-clean']['p'].mean():.3f}")
print("\nmaps: P_s -> P(true)")
for name, cal in fitted.items():
    xs = np.array([.05, .2, .35, .5, .65, .8, .9, .97])
    print(f"{name:26s}", " ".join(f"{x:.2f}->{v:.3f}" for x, v in zip(xs, predict(cal, xs))))
np.savez("/tmp/fast-short-sets.npz", **{f"{k}__{f}": v for k, a in S.items() for f, v in a.items() if f != "preset"})
