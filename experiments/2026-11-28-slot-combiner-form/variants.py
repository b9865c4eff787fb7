"""The four combiner forms of README.md, leave one pair dev set out (reads the cache that
scripts/fit_slot_combiner.py --cache /tmp/devset-cache.npz writes). Run from the repository
root with scripts/ on PYTHONPATH: PYTHONPATH=.:scripts python experiments/.../variants.py.
"full LR" is fit_combiner as committed in 3f1832e (a scikit-learn logistic regression)."""
import numpy as np
from fit_slot_combiner import SETS, load_set, scores
from franq.verifier.combiner import fit_combiner
from franq.verifier.slots import FEATURES, features
from scipy.optimize import minimize

kept = dict(np.load('/tmp/devset-cache.npz'))
data = {}
for name in SETS:
    rows = load_set(name)
    key = next(k for k in kept if k.endswith('|' + name))
    feats = np.array([features(r['claim'], [r['premise']]) for r in rows])
    data[name] = (kept[key], feats, np.array([int(r['label']) for r in rows]))

def fit_resid(p3, f, y, cols, l2=1.0, intercept=False):
    X = f[:, cols]; lp = np.log(np.clip(p3, 1e-6, 1)); n, F = X.shape
    def unpack(t):
        W = np.zeros((3, F)); W[1:] = t[:2 * F].reshape(2, F)
        b = np.zeros(3)
        if intercept: b[1:] = t[2 * F:]
        return W, b
    def loss(t):
        W, b = unpack(t); z = lp + X @ W.T + b; z -= z.max(1, keepdims=True)
        lse = np.log(np.exp(z).sum(1)); ll = z[np.arange(n), y] - lse
        return -ll.mean() + l2 * (W ** 2).sum() / n
    t0 = np.zeros(2 * F + (2 if intercept else 0))
    t = minimize(loss, t0, method='L-BFGS-B').x
    W, b = unpack(t)
    def apply(p3, f):
        z = np.log(np.clip(p3, 1e-6, 1)) + f[:, cols] @ W.T + b
        e = np.exp(z - z.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)
    return apply, W

MISM = [FEATURES.index(k) for k in ("number_mismatch", "year_mismatch", "version_mismatch", "entity_absent",
                                    "entity_elsewhere", "negation_mismatch", "comparative_mismatch",
                                    "scope_mismatch", "order_swap", "evidence")]
ALL = list(range(len(FEATURES)))
for label, fn in [("full LR", None), ("resid all", (ALL, False)), ("resid mism", (MISM, False)), ("resid mism+b", (MISM, True))]:
    print('==', label)
    for name in SETS:
        rest = [n for n in SETS if n != name]
        P = np.vstack([data[n][0] for n in rest]); Fh = np.vstack([data[n][1] for n in rest]); Y = np.concatenate([data[n][2] for n in rest])
        p3, f, y = data[name]
        if fn is None:
            out = fit_combiner(P, Fh, Y).apply(p3, f)
        else:
            app, W = fit_resid(P, Fh, Y, fn[0], intercept=fn[1]); out = app(p3, f)
        a, b = scores(p3, y), scores(out, y)
        print(name, ' '.join(f"{k} {a[k]:.3f}->{b[k]:.3f}" for k in a))
    if fn:
        P = np.vstack([data[n][0] for n in SETS]); Fh = np.vstack([data[n][1] for n in SETS]); Y = np.concatenate([data[n][2] for n in SETS])
        app, W = fit_resid(P, Fh, Y, fn[0], intercept=fn[1])
        print(np.round(W, 2))
