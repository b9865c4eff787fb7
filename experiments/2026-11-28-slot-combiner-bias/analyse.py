import json, sys
from pathlib import Path
import numpy as np
from franq.verifier.combiner import INPUTS, SlotCombiner, _softmax
from franq.verifier.slots import FEATURES, features
from franq.evaluation.metrics import auroc, balanced_accuracy
C = Path(__file__).resolve().parent  # run1.py / run2.py exec this file
R = C.parents[1]
sys.path.insert(0, str(R))

def dev_sets():
    cache = np.load("/tmp/devset-cache.npz", allow_pickle=True)
    out = {}
    for name in ("synthetic-nq", "synthetic-expertqa", "nq-declarative"):
        rows = [json.loads(l) for l in open(R / f"datasets/verifier/dev/{name}.jsonl") if l.strip()]
        fc = C / f"feat-{name}.npy"
        if fc.exists(): f = np.load(fc)
        else:
            f = np.array([features(r["claim"], [r["premise"]]) for r in rows]); np.save(fc, f)
        out[name] = (cache[f"verifier:franq-verifier-minilm-v7|{name}"], f, np.array([r["label"] for r in rows]))
    return out

def load(name):
    d = np.load(C / f"cache-{name}.npz", allow_pickle=True)
    return d["p3"], d["f"], d["y"], d["kinds"]

def natural3(y):  # support label 1 -> S(0), 0 -> N(2)
    return np.where(np.asarray(y).astype(int) == 1, 0, 2)

class Combo:
    def __init__(self, w, b=None): self.w, self.b = w, (np.zeros(3) if b is None else b)
    def apply(self, p3, f):
        lp = np.log(np.clip(p3, 1e-6, 1)); x = f[:, len(FEATURES) - len(INPUTS):]
        return _softmax(lp + x @ self.w.T + self.b)

def fit(p3, f, y, intercept, l2=1.0):
    from scipy.optimize import minimize
    lp = np.log(np.clip(p3, 1e-6, 1)); x = f[:, len(FEATURES) - len(INPUTS):]; n, k = x.shape
    def unpack(t):
        w = np.vstack([np.zeros(k), t[:2 * k].reshape(2, k)])
        b = np.r_[0.0, t[2 * k:]] if intercept else np.zeros(3)
        return w, b
    def loss(t):
        w, b = unpack(t); z = lp + x @ w.T + b; z = z - z.max(1, keepdims=True)
        return float(-(z[np.arange(n), y] - np.log(np.exp(z).sum(1))).mean() + l2 * (w ** 2).sum() / n)
    t = minimize(loss, np.zeros(2 * k + (2 if intercept else 0)), method="L-BFGS-B").x
    return Combo(*unpack(t))

def binrep(p, y):
    y = np.asarray(y).astype(int); s, c = p[:, 0], p[:, 1]
    if 0 < y.sum() < len(y):
        return f"BAcc {balanced_accuracy(s, y):.3f} AUROC {auroc(s, y):.3f} sup:C>.5 {np.mean(c[y==1]>.5):.2f} uns:argmaxC {np.mean(p[y==0].argmax(1)==1):.2f}"
    return f"P_s<.5 {np.mean(s<.5):.3f} argmaxC {np.mean(p.argmax(1)==1):.3f}"

def userrep(p, y, kinds):
    y = np.asarray(y); out = []
    sup = y == "supported"; con = y == "contradicted"; nm = np.char.startswith(y.astype(str), "not_mentioned")
    out.append(f"sup P_s>=.5 {np.mean(p[sup,0]>=.5):.2f} | con P_s<.5 {np.mean(p[con,0]<.5):.2f} argmaxC {np.mean(p[con].argmax(1)==1):.2f} | nm argmaxC {np.mean(p[nm].argmax(1)==1):.2f} P_s<.5 {np.mean(p[nm,0]<.5):.2f}")
    ks = sorted(set(kinds[con]))
    out.append("   kinds P_s<.5: " + " ".join(f"{k} {np.mean(p[con & (kinds==k),0]<.5):.2f}" for k in ks))
    out.append(f"   AUROC P_s sup vs rest {auroc(p[:,0], sup.astype(int)):.3f}; P_s-P_c sup vs con {auroc(p[sup|con,0]-p[sup|con,1], sup[sup|con].astype(int)):.3f}")
    return "\n".join(out)
