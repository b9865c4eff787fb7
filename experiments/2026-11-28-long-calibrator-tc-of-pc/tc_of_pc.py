"""The long-form soft three-condition fit with T_c an isotonic map of P_c (decreasing)
instead of UQ_faith, beside T_s flat / on UQ_faith / on P_s, with and without the prior moved
back to the natural share, Beta step strength 1 and 30. From the natural-set cache of the
default stack (benchmarks/cache/natural-verifier:franq-verifier-minilm-v7:relevant:slots.json):

    OMP_NUM_THREADS=1 python experiments/2026-11-28-long-calibrator-tc-of-pc/tc_of_pc.py > result.txt   # 5 s
"""
import sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "benchmarks")
from franq.fit import natural as nat
from calibration.isotonic import IsotonicCalibrator
from calibration.prior import logit_shift, shift_probabilities
from calibration.franq import log_scores

sets = nat.natural_sets(Path("datasets"), None, compute=False, echo=lambda m: None)
print({k: len(v["is_true"]) for k, v in sets.items() if isinstance(v, dict)})
train, contra = sets["expertqa-train"], sets["expertqa-train-contra"]
test, tcontra, wice = sets["expertqa-test"], sets["expertqa-test-contra"], sets["wice-heldout"]

def fit(data, *, tc="pc", ts="flat", tn="uq", prior=None, strength=1.0):
    P = np.stack([data["p_faithful"], data["p_contradicted"], data["p_not_mentioned"]], 1)
    P = P / P.sum(1, keepdims=True)
    y = data["is_true"]
    xs = {"flat": lambda s: np.zeros(len(s["is_true"])), "uq": lambda s: log_scores(s["uq_faith"]),
          "pc": lambda s: -np.asarray(s["p_contradicted"]), "ps": lambda s: np.asarray(s["p_faithful"]),
          "uqn": lambda s: log_scores(s["uq_unfaith"])}
    spec = [(ts if ts != "uq" else "uq", 0), (tc, 1), ({"uq": "uqn", "flat": "flat"}[tn], 2)]
    maps = [IsotonicCalibrator(prior_strength=strength).fit(xs[k](data), y, P[:, i]) for k, i in spec]
    share = float((P * y[:, None]).sum() / P.sum())
    shift = 0.0 if prior is None else logit_shift(share, prior)
    def predict(s):
        Q = np.stack([s["p_faithful"], s["p_contradicted"], s["p_not_mentioned"]], 1); Q = Q / Q.sum(1, keepdims=True)
        T = [shift_probabilities(m.predict(xs[k](s)), shift) for m, (k, _) in zip(maps, spec)]
        return sum(Q[:, i] * T[i] for i in range(3)), T
    return predict

def report(name, pred):
    row = [name]
    for label, s in (("rand_test", test), ("wice", wice)):
        m = nat.scores(pred(s)[0], s)
        row.append(f"{label} ECE {m['ece']:.3f} Brier {m['brier']:.4f} AUROC {m['auroc']:.3f}")
    both = nat.join(test, tcontra); m = nat.scores(pred(both)[0], both)
    pc = pred(tcontra)[0]
    row.append(f"+copies ECE {m['ece']:.3f} AUROC {m['auroc']:.3f} caught {int((pc < .5).sum())}/{len(pc)}")
    print(" | ".join(row))

base = float(train["is_true"].mean())
full = nat.join(train, contra)
for tc in ("uq", "pc", "flat"):
    for ts in ("flat", "uq", "ps"):
        for prior in (None, base):
            for strength in (1.0, 30.0):
                report(f"tc={tc} ts={ts} prior={'back' if prior else '-'} k={strength:g}", fit(full, tc=tc, ts=ts, prior=prior, strength=strength))
