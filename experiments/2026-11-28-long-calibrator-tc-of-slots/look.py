"""How the slot check's evidence separates natural claims from contradicted copies."""
import json
from pathlib import Path
import numpy as np
from franq.fit import natural as nat
from franq.evaluation.common import auroc
F = json.loads(Path("/tmp/tc-slots/features.json").read_text())
names = F["names"]; ev = names.index("evidence")
sets = nat.natural_sets(Path("datasets"), None, compute=False, echo=lambda m: None)
for name in nat.LONG_SETS:
    X = np.array(F[name]["features"]); s = sets[name]; y = s["is_true"]
    e = X[:, ev]
    print(f"{name:22s} n={len(y)} true={y.mean():.3f} ev>0: {np.mean(e>0):.3f} ev>.3: {np.mean(e>.3):.3f} ev>.5: {np.mean(e>.5):.3f}"
          f"  corr(ev,P_c)={np.corrcoef(e, s['p_contradicted'])[0,1]:.2f}  P_c>.5: {np.mean(s['p_contradicted']>.5):.3f}")
    if 0 < y.sum() < len(y):
        print(f"   AUROC(-ev) {auroc(-e, y):.3f}  AUROC(-P_c) {auroc(-s['p_contradicted'], y):.3f}  "
              f"share true | ev>.3: {y[e>.3].mean() if (e>.3).any() else float('nan'):.3f}  | ev=0: {y[e==0].mean():.3f}")
    for j, f in enumerate(names[3:-1], 3):
        pass
    print("   mismatch rates:", {f: round(float(np.mean(X[:, j] > 0)), 3) for j, f in enumerate(names) if "mismatch" in f or f in ("entity_absent", "entity_elsewhere", "order_swap")})

# copies (y = 0) against natural test claims (y = 1): how well each signal tells them apart
nat_t, cop = sets["expertqa-test"], sets["expertqa-test-contra"]
e_t = np.array(F["expertqa-test"]["features"])[:, ev]; e_c = np.array(F["expertqa-test-contra"]["features"])[:, ev]
y = np.r_[np.ones(len(e_t)), np.zeros(len(e_c))]
print("\nnatural test (1104) vs contradicted copies (199): AUROC of each signal (higher = copies lower)")
for label, sig in (("-evidence", -np.r_[e_t, e_c]), ("-P_c", -np.r_[nat_t["p_contradicted"], cop["p_contradicted"]]),
                   ("P_s", np.r_[nat_t["p_faithful"], cop["p_faithful"]])):
    print(f"  {label:10s} {auroc(sig, y):.3f}")
for t in (0.1, 0.3, 0.5):
    a, b = float(np.sum(e_t > t)), float(np.sum(e_c > t))
    print(f"  evidence > {t}: natural {int(a)} ({a/len(e_t):.3f}), copies {int(b)} ({b/len(e_c):.3f}); "
          f"share copies among flagged at 15% copies {b/(a+b):.3f}")
