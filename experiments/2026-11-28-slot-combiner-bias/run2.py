exec(open("analyse.py").read())
dev = dev_sets()
nat = {k: load(k) for k in ("wice_fit", "expertqa_train")}
rep = {k: load(k) for k in ("wice_heldout", "expertqa_rand_test", "expertqa_contradicted")}
ud = load("userdev")

class Combo2(Combo):
    def __init__(self, w, b, a): super().__init__(w, b); self.a = a
    def apply(self, p3, f):
        lp = np.log(np.clip(p3, 1e-6, 1)); x = f[:, len(FEATURES) - len(INPUTS):]
        return _softmax(self.a * lp + x @ self.w.T + self.b)

def fit2(p3, f, y, wt, l2=1.0, scale=True, feats=True):
    from scipy.optimize import minimize
    lp = np.log(np.clip(p3, 1e-6, 1)); x = f[:, len(FEATURES) - len(INPUTS):] * (1.0 if feats else 0.0); n, k = x.shape
    def unpack(t):
        w = np.vstack([np.zeros(k), t[:2 * k].reshape(2, k)]); b = np.r_[0.0, t[2 * k:2 * k + 2]]
        a = np.exp(t[2 * k + 2:]) if scale else np.ones(3)
        return w, b, a
    def loss(t):
        w, b, a = unpack(t); z = a * lp + x @ w.T + b; z = z - z.max(1, keepdims=True)
        ll = z[np.arange(n), y] - np.log(np.exp(z).sum(1))
        return float(-(wt * ll).sum() / wt.sum() + l2 * (w ** 2).sum() / n)
    t = minimize(loss, np.zeros(2 * k + 2 + (3 if scale else 0)), method="L-BFGS-B").x
    return Combo2(*unpack(t))

def choice_score(cb):
    s = [np.mean(cb.apply(p, f).argmax(1) == y) for p, f, y in dev.values()]
    for p, f, y, _ in nat.values():
        q = cb.apply(p, f); yy = np.asarray(y).astype(int)
        s.append((balanced_accuracy(q[:, 0], yy) + auroc(q[:, 0], yy)) / 2)
    return float(np.mean(s)), s

blocks = [(d[0], d[1], d[2], 1.0 / len(d[2])) for d in dev.values()] + [(d[0], d[1], natural3(d[2]), 1.0 / len(d[2])) for d in nat.values()]
def stack(natw):
    P = np.vstack([b[0] for b in blocks]); F = np.vstack([b[1] for b in blocks]); Y = np.concatenate([b[2] for b in blocks])
    W = np.concatenate([np.full(len(b[2]), b[3] * (natw if i >= 3 else 1.0)) for i, b in enumerate(blocks)])
    return P, F, Y, W
res = {"v7": Combo2(np.zeros((3, len(INPUTS))), np.zeros(3), np.ones(3))}
for natw in (1.0, 1.5, 3.0):
    for l2 in (0.3, 1.0, 3.0):
        for scale in (False, True):
            P, F, Y, W = stack(natw)
            res[f"natw {natw} l2 {l2} scale {scale}"] = fit2(P, F, Y, W, l2, scale)
    P, F, Y, W = stack(natw)
    res[f"natw {natw} scaling only"] = fit2(P, F, Y, W, 1.0, True, feats=False)
scored = sorted(((choice_score(cb)[0], k) for k, cb in res.items()), reverse=True)
for s, k in scored: print(f"{s:.4f}  {k}  " + " ".join(f"{x:.3f}" for x in choice_score(res[k])[1]))
import pickle; pickle.dump(res, open("res2.pkl", "wb"))
best = scored[0][1]
for name in (best, "v7", "natw 1.0 scaling only"):
    cb = res[name]; print("=====", name, "b", np.round(cb.b, 2), "a", np.round(cb.a, 2))
    for k, (p, f, y, _) in rep.items(): print(f"  [report] {k:20s}", binrep(cb.apply(p, f), y))
    print("  [report] userdev", userrep(cb.apply(ud[0], ud[1]), ud[2], ud[3]))
