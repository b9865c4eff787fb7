"""How often the slot check's order_swap feature fires on supported and unsupported claims,
as defined and with swaps in claims holding a copula ignored (features only, no model).

    OMP_NUM_THREADS=1 python experiments/2026-11-28-slot-order-swap/count.py > result.txt   # from the repository root
"""
import json, re, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "benchmarks")
from franq.fit.verifier.eval import long_evidence_sets
from franq.verifier.slots import features, FEATURES
from bench_userdev import DATA, load
COPULA = re.compile(r"\b(is|are|was|were)\b", re.I)
k = FEATURES.index("order_swap")
sets = long_evidence_sets(Path("datasets"))
ud = load(DATA)
sets["userdev"] = ([([p["text"] if isinstance(p, dict) else p for p in r["passages"]], c["text"]) for r in ud for c in r["claims"]],
                   np.array([c["label"] for r in ud for c in r["claims"]]))
for name, (items, y) in sets.items():
    f = np.array([features(claim, passages)[k] for passages, claim in items])
    cop = np.array([bool(COPULA.search(claim)) for _, claim in items])
    if name == "userdev":
        for lab in ("supported", "contradicted", "not_mentioned_true", "not_mentioned_false"):
            m = y == lab
            print(f"{name} {lab}: n={m.sum()} order_swap fires {f[m].mean():.3f}; with a copula {f[m & cop].mean() if (m&cop).any() else 0:.3f} ({(m&cop).sum()}); fires w/o copula {(f[m] * ~cop[m]).mean():.3f}")
        m = np.array([c.get("kind") == "role_swap" for r in ud for c in r["claims"]])
        print(f"userdev role_swap: n={m.sum()} fires {f[m].mean():.3f}, without copula {(f[m]*~cop[m]).mean():.3f}")
    else:
        for lab in (1, 0):
            m = y == lab
            if m.any():
                print(f"{name} y={lab}: n={m.sum()} order_swap fires {f[m].mean():.3f}; copula-claims {cop[m].mean():.2f}; fires if copula rule {(f[m]*~cop[m]).mean():.3f}")
