"""Fast-mode calibrators that read P_contradicted, against the shipped map of P_supported.
Fitted on ExpertQA train (natural, truth labels) and its contradicted copies at a stated
weight; read on ExpertQA held out (natural) and its contradicted copies (never fitted on).

    python fit_variants.py        (after score_sets.py)
"""
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from calibration.isotonic import IsotonicCalibrator  # noqa: E402
from calibration.metrics import brier_score, expected_calibration_error  # noqa: E402
from franq.evaluation.common import auroc  # noqa: E402

d = np.load(HERE / "sets.npz")
tr, ty, cr = d["train_p3"], d["train_y"], d["train-contradicted_p3"]
hp, hy, hc = d["heldout_p3"], d["heldout_y"], d["heldout-contradicted_p3"]
EXAMPLE = {"solid gold": [0.060, 0.481, 0.459], "Berlin": [0.064, 0.733, 0.203]}  # franq score --example --fast


def iso(x, y, w=None):
    return IsotonicCalibrator().fit(x, y, sample_weight=w)


def report(name, f):
    q, qc = f(hp), f(hc)
    ex = " ".join(f"{k} {float(f(np.array([v]))[0]):.2f}" for k, v in EXAMPLE.items())
    both = np.r_[q, qc]
    yb = np.r_[hy, np.zeros(len(qc))]
    print(f"| {name} | {expected_calibration_error(q, hy):.3f} | {brier_score(q, hy):.4f} | {auroc(q, hy):.3f} "
          f"| {np.mean(qc < 0.5):.2f} | {np.mean(q[hy == 1] < 0.5):.3f} | {auroc(both, yb):.3f} | {ex} |")


print(f"train {len(ty)} claims ({ty.mean():.3f} true), {len(cr)} contradicted copies; held out {len(hy)} "
      f"({hy.mean():.3f} true), {len(hc)} copies; constant Brier {hy.mean() * (1 - hy.mean()):.4f}")
print("| candidate | ECE held out | Brier | AUROC | copies < .5 | true < .5 | AUROC with copies | example |")
print("|---|---|---|---|---|---|---|---|")
m = iso(tr[:, 0], ty)
report("shipped form: isotonic map of P_s (natural only)", lambda p: m.predict(p[:, 0]))
for share in (0.0, 0.05, 0.1, 0.17):
    n = len(ty)
    wc = share * n / max(1e-9, (1 - share) * len(cr)) if share else 0.0
    P = np.vstack([tr, cr]); Y = np.r_[ty, np.zeros(len(cr))]; W = np.r_[np.ones(n), np.full(len(cr), wc)]
    T = (P * (W * Y)[:, None]).sum(0) / (P * W[:, None]).sum(0)
    report(f"constants T = {np.round(T, 3).tolist()}, copies {share:.0%} of the fit", lambda p, T=T: p @ T)
    s = P @ T
    m2 = iso(s, Y, W)
    report(f"isotonic map of that mix, copies {share:.0%}", lambda p, T=T, m2=m2: m2.predict(p @ T))
    m3 = iso(P[:, 0] - P[:, 1], Y, W)
    report(f"isotonic map of P_s - P_c, copies {share:.0%}", lambda p, m3=m3: m3.predict(p[:, 0] - p[:, 1]))
