"""A sharper negation feature for the next slot-combiner refit: a negation flip on a near
copy (the claim and its best speaking sentence share most content words, and one of them is
negated) beside the shipped ``negation_mismatch`` (any difference in polarity between the claim
and its best speaking sentence). See README.md beside this file.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-slot-negation-flip/run.py --cache CACHE_DIR

CACHE_DIR: v7's window probabilities per set, as experiments/2026-11-29-verifier-two-experts/run.py
--only-cache v7 writes them.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
for sub in ("scripts", "benchmarks", "experiments/2026-11-29-verifier-two-experts"):
    sys.path.insert(0, str(ROOT / sub))
NEAR = (0.6, 0.7, 0.8)


def flip(claim: str, passages: list[str], near: float) -> float:
    """1 when the best speaking sentence shares at least ``near`` of the claim's content words
    (and the claim shares as much of the sentence's) and exactly one of the two is negated."""
    from franq.verifier.slots import _content, extract, speaking_sentences

    sp = speaking_sentences(claim, passages, top=1)
    if not sp:
        return 0.0
    a, b = _content(claim), _content(sp[0][1])
    both = len(a & b)
    if not a or not b or both / len(a) < near or both / len(b) < near / 2:
        return 0.0
    return float((extract(claim).negations > 0) != (extract(sp[0][1]).negations > 0))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("--out", default=str(Path(__file__).with_name("result.json")))
    args = ap.parse_args(argv)
    import run as two
    from bench_verifier_heldout import _binary, _userdev
    from fit_slot_combiner import choose, fit, held_apart

    from franq.verifier import Verifier, shipped_verifier_dir
    from franq.verifier.aggregate import relevant
    from franq.verifier.slots import FEATURES, features

    v7 = Verifier(shipped_verifier_dir())
    rows = {}
    for name, (items, y, kinds) in two.sets().items():
        p, off = two.windows_of(v7, name, items, Path(args.cache))
        p7 = np.array([relevant(p[a:b])[0] if b > a else [0, 0, 1] for a, b in itertools.pairwise(off)])
        feats = np.array([features(c, list(ps)) for ps, c in items])
        flips = np.array([[flip(c, list(ps), n) for n in NEAR] for ps, c in items])
        rows[name] = {"p7": p7, "feats": feats, "flips": flips, "y": y, "kinds": kinds}
        print(name, "negation_mismatch fires", int(feats[:, FEATURES.index("negation_mismatch")].sum()),
              "flip fires", flips.sum(0).astype(int).tolist(), flush=True)
    fit_names = [n for n in rows if not n.startswith("R ")]
    neg = FEATURES.index("negation_mismatch")
    out = {"fires": {n: {"negation_mismatch_by_label": {str(lab): int(r["feats"][r["y"] == lab, neg].sum())
                                                        for lab in sorted(set(r["y"].tolist()))},
                         "flip_by_label": {str(lab): r["flips"][r["y"] == lab].sum(0).astype(int).tolist()
                                           for lab in sorted(set(r["y"].tolist()))}} for n, r in rows.items()},
           "variants": {}}
    variants = {"shipped features (refit)": lambda r: r["feats"]}
    for i, near in enumerate(NEAR):
        variants[f"+ negation flip on a near copy ({near})"] = lambda r, i=i: np.hstack([r["feats"], r["flips"][:, [i]]])
    for label, make in variants.items():
        d = {n: (r["p7"], make(r), r["y"]) for n, r in rows.items()}
        loso = held_apart(d, fit_names)
        _, l2, nw = choose(d, fit_names)
        comb = fit(d, fit_names, l2, nw)
        res = {"loso": loso, "loso_mean": round(float(np.mean(list(loso.values()))), 4), "l2": l2,
               "natural_weight": nw, "weights_c_n_of_last": np.round(comb.weights[1:, -1], 3).tolist()}
        for n, r in rows.items():
            if n.startswith("R "):
                m = comb.apply(d[n][0], d[n][1])
                res[n[2:]] = _userdev(m, list(r["y"]), list(r["kinds"])) if n == "R userdev" else _binary(m, r["y"])
        out["variants"][label] = res
        print(label, json.dumps(res), flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
