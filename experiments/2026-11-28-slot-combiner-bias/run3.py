exec(open("analyse.py").read())
from scipy.optimize import minimize
dev = dev_sets()
nat = {k: load(k) for k in ("wice_fit", "expertqa_train")}
rep = {k: load(k) for k in ("wice_heldout", "expertqa_rand_test", "expertqa_contradicted")}
ud = load("userdev")
def fit3(blocks, l2):
    # y: 0 S, 1 C, 2 N, 3 "not supported" (C or N)
    P = np.vstack([b[0] for b in blocks]); F = np.vstack([b[1] for b in blocks]); Y = np.concatenate([b[2] for b in blocks])
    W = np.concatenate([np.full(len(b[2]), b[3]) for b in blocks])
    lp = np.log(np.clip(P, 1e-6, 1)); x = F[:, len(FEATURES) - len(INPUTS):]; n, k = x.shape
    def unpack(t): return np.vstack([np.zeros(k), t[:2*k].reshape(2, k)]), np.r_[0.0, t[2*k:]]
    def loss(t):
        w, b = unpack(t); z = lp + x @ w.T + b; z = z - z.max(1, keepdims=True)
        lse = np.log(np.exp(z).sum(1))
        ll = np.where(Y == 3, np.log(np.exp(z[:, 1]) + np.exp(z[:, 2])) - lse, z[np.arange(n), np.minimum(Y, 2)] - lse)
        return float(-(W * ll).sum() / W.sum() + l2 * (w ** 2).sum() / n)
    w, b = unpack(minimize(loss, np.zeros(2*k+2), method="L-BFGS-B").x)
    return Combo(w, b)
def choice_score(cb):
    s = [np.mean(cb.apply(p, f).argmax(1) == y) for p, f, y in dev.values()]
    for p, f, y, _ in nat.values():
        q = cb.apply(p, f); yy = np.asarray(y).astype(int)
        s.append((balanced_accuracy(q[:, 0], yy) + auroc(q[:, 0], yy)) / 2)
    return float(np.mean(s))
res = {}
for natw in (1.0, 1.5, 3.0):
    for l2 in (0.3, 1.0, 3.0):
        blocks = [(d[0], d[1], d[2], 1.0 / len(d[2])) for d in dev.values()] + [(d[0], d[1], np.where(np.asarray(d[2]).astype(int) == 1, 0, 3), natw / len(d[2])) for d in nat.values()]
        res[(natw, l2)] = fit3(blocks, l2)
sc = sorted(((choice_score(cb), k) for k, cb in res.items()), reverse=True)
print(sc[:4])
cb = res[sc[0][1]]; print("bias", np.round(cb.b, 3))
for k, (p, f, y, _) in rep.items(): print(f"  [report] {k:20s}", binrep(cb.apply(p, f), y))
print("  [report] userdev", userrep(cb.apply(ud[0], ud[1]), ud[2], ud[3]))
import pickle; pickle.dump(cb, open("cb3.pkl", "wb"))
