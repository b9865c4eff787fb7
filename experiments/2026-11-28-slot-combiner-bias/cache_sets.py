"""Cache v7's (P_s, P_c, P_n) and the slot features per claim for the verifier sets."""
import json, sys, time
from pathlib import Path
import numpy as np
import torch
torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from franq.fit.verifier.eval import long_evidence_sets, fit_evidence_sets
from franq.verifier import Verifier, shipped_verifier_dir
from franq.verifier.slots import features

def userdev():
    items, y, kinds = [], [], []
    for line in open(ROOT / "datasets/userdev/answers.jsonl"):
        r = json.loads(line)
        ps = [p["text"] if isinstance(p, dict) else p for p in r.get("passages") or []]
        for c in r["claims"]:
            items.append((ps, c["text"])); y.append(c["label"]); kinds.append(c.get("kind") or "")
    return items, y, kinds

which = sys.argv[1]
v = Verifier(shipped_verifier_dir())
sets = {}
if which == "A":
    le = long_evidence_sets(ROOT / "datasets"); fe = fit_evidence_sets(ROOT / "datasets")
    sets = {"wice heldout": le["wice heldout"], "wice fit": fe["wice fit"]}
else:
    le = long_evidence_sets(ROOT / "datasets"); fe = fit_evidence_sets(ROOT / "datasets")
    ui, uy, uk = userdev()
    sets = {"userdev": (ui, uy, uk)}
    sets.update({k: val for k, val in le.items() if k.startswith("expertqa")})
    sets["expertqa train (400)"] = fe["expertqa train (400)"]
for name, tup in sets.items():
    items, y = tup[0], tup[1]
    t0 = time.time()
    d = v.verify([(list(p), c) for p, c in items])
    p3 = np.array([[x.p_supported, x.p_contradicted, x.p_not_mentioned] for x in d])
    f = np.array([features(c, list(p)) if any(s.strip() for s in p) else np.zeros(13) for p, c in items])
    out = Path(__file__).resolve().parent / (f"cache-{name.split(' (')[0].replace(' ', '_')}.npz")
    np.savez(out, p3=p3, f=f, y=np.array(y, dtype=object), kinds=np.array(tup[2] if len(tup) > 2 else [""] * len(y), dtype=object),
             claims=np.array([c for _, c in items], dtype=object))
    print(name, len(y), f"{time.time()-t0:.0f}s", flush=True)
