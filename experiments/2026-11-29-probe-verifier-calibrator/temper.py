"""Addendum: the verifier's three probabilities tempered (log p / T, a bias on P_c, renormalised) before the
soft fit. Run after the choice and after the held-out sets had been read (see README.md, Addendum).

    OMP_NUM_THREADS=1 python experiments/2026-11-29-probe-verifier-calibrator/temper.py $OUT/probe-pairs.json
"""
import json, numpy as np, importlib.util, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("obs", ROOT / "experiments/2026-11-28-observer-calibrator-variants/run.py")
obs = importlib.util.module_from_spec(spec); spec.loader.exec_module(obs)
sets = json.load(open(sys.argv[1]))
def tempered(s, t, bias):
    p = np.stack([np.asarray(s[k], float) for k in ("p_faithful", "p_contradicted", "p_not_mentioned")], 1)
    z = np.log(np.clip(p, 1e-9, 1)) / t + np.asarray(bias)
    q = np.exp(z - z.max(1, keepdims=True)); q /= q.sum(1, keepdims=True)
    out = dict(s); out["p_faithful"], out["p_contradicted"], out["p_not_mentioned"] = q[:, 0].tolist(), q[:, 1].tolist(), q[:, 2].tolist()
    return out
rows = []
for t in (1, 2, 4, 8):
    for bc in (0.0, -1.0, -2.0):
        tr = tempered(sets["train"], t, [0, bc, 0])
        cvm = obs.cv(tr, {})
        model = obs.fit(tr, {})
        te = tempered(sets["test"], t, [0, bc, 0]); own = tempered(sets["own"], t, [0, bc, 0])
        mt = obs.metrics(model.predict(obs.subset(te, slice(None))), np.asarray(te["is_true"], float))
        rows.append((t, bc, cvm["ece"], cvm["auroc"], mt["ece"], mt["auroc"]))
        print(f"T={t} bias_c={bc}: CV ECE {cvm['ece']:.3f} AUROC {cvm['auroc']:.3f} | held-out pairs ECE {mt['ece']:.3f} AUROC {mt['auroc']:.3f}")
print()
from franq.fit.natural import raw3
for t, bc in ((1, 0.0), (2, 0.0), (2, -1.0), (4, 0.0)):
    tr = tempered(sets["train"], t, [0, bc, 0]); model = obs.fit(tr, {}); cvm = obs.cv(tr, {})
    rawcv = obs.metrics(raw3(obs.subset(tr, slice(None))), np.asarray(tr["is_true"], float))
    out = [f"T={t} bias_c={bc}: CV ECE {cvm['ece']:.3f} Brier {cvm['brier']:.4f} AUROC {cvm['auroc']:.3f} (raw AUROC {rawcv['auroc']:.3f})"]
    for h in ("test", "own"):
        s = tempered(sets[h], t, [0, bc, 0]); y = np.asarray(s["is_true"], float)
        m = obs.metrics(model.predict(obs.subset(s, slice(None))), y)
        out.append(f"{h}: ECE {m['ece']:.3f} (floor {m['floor'][0]:.3f}) Brier {m['brier']:.4f} (const {y.mean()*(1-y.mean()):.4f}) AUROC {m['auroc']:.3f}")
    print(" | ".join(out))
