"""Two experts: v7 (reads natural long evidence best) and a contrastive-trained verifier (v9
step 200: catches more typed contradictions, reads natural evidence worse), fused by the slot
combiner's fit with the second expert's log-probabilities, on the window v7 chose, as extra
inputs. See README.md beside this file.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-verifier-two-experts/run.py \
        --expert DIR --cache CACHE_DIR [--only-cache NAME]

Fit sets (each held apart in turn, the combiner fitted on the other four; the choice of L2 and
the natural sets' weight by scripts/fit_slot_combiner.py's rule): the pair dev sets and the
natural fit splits. Report sets (read only to report): WiCE held out, ExpertQA rand_test 400,
its contradicted copies, the user-style dev set (claims given).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def sets() -> dict:
    from bench_verifier_heldout import userdev_items
    from fit_slot_combiner import PAIR_SETS, load_set

    from franq.fit.verifier.eval import fit_evidence_sets, long_evidence_sets

    out = {}
    for name in PAIR_SETS:
        rows = load_set(name)
        out[name] = ([([r["premise"]], r["claim"]) for r in rows], np.array([int(r["label"]) for r in rows]), None)
    for name, (items, y) in fit_evidence_sets(ROOT / "datasets").items():
        out[name] = ([(list(p), c) for p, c in items], np.array([0 if int(t) == 1 else 3 for t in y]), None)
    for name, (items, y) in long_evidence_sets(ROOT / "datasets").items():
        out["R " + name] = ([(list(p), c) for p, c in items], np.asarray(y, dtype=int), None)
    items, labels, kinds = userdev_items()
    out["R userdev"] = (items, np.array(labels), np.array(kinds))
    return out


def windows_of(v, name: str, items, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """(window probabilities stacked, offsets) of every claim, cached per verifier and set."""
    f = cache / f"{v.name}--{name.replace(' ', '_').replace('/', '_')}.npz"
    if f.is_file():
        d = np.load(f)
        return d["p"], d["off"]
    got = v.window_probabilities(items)
    p = np.vstack([w for _, w in got])
    off = np.cumsum([0] + [len(w) for _, w in got])
    np.savez(f, p=p, off=off)
    return p, off


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--expert", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--only-cache", default=None, help="only fill the cache for this verifier: v7 or expert")
    ap.add_argument("--out", default=str(Path(__file__).with_name("result.json")))
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from fit_slot_combiner import NATURAL_SETS, choose, fit, set_score

    from franq.verifier import Verifier, shipped_verifier_dir
    from franq.verifier.aggregate import relevant
    from franq.verifier.combiner import load_combiner
    from franq.verifier.slots import features

    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    v7 = Verifier(shipped_verifier_dir())
    ex = Verifier(args.expert)
    data = sets()
    readers = {"v7": [v7], "expert": [ex]}.get(args.only_cache, [v7, ex])
    rows = {}
    for name, (items, y, kinds) in data.items():
        got = {v.name: windows_of(v, name, items, cache) for v in readers}
        print(f"{name}: {len(items)} claims read", flush=True)
        if args.only_cache:
            continue
        (p7w, off), (pew, off_e) = got[v7.name], got[ex.name]
        assert (off == off_e).all(), "the two verifiers cut other windows"
        p7, pek, peo = [], [], []
        for a, b in zip(off[:-1], off[1:]):
            if a == b:  # no window: (0, 0, 1)
                p7.append([0, 0, 1]); pek.append([0, 0, 1]); peo.append([0, 0, 1])
                continue
            q, k = relevant(p7w[a:b])
            p7.append(q); pek.append(pew[a + k]); peo.append(relevant(pew[a:b])[0])
        feats = np.array([features(c, list(p)) for p, c in items])
        rows[name] = {"p7": np.array(p7), "pek": np.array(pek), "peo": np.array(peo), "feats": feats, "y": y,
                      "kinds": kinds}
    if args.only_cache:
        return 0
    shipped = load_combiner(v7)

    def extra(r, with_expert):
        lp = np.log(np.clip(r["pek"], 1e-6, 1.0))
        return np.hstack([r["feats"], lp]) if with_expert else r["feats"]

    fit_names = [n for n in rows if not n.startswith("R ")]
    report_names = [n for n in rows if n.startswith("R ")]
    variants = {}
    for label, with_expert in (("v7 + slots (refit)", False), ("v7 + slots + expert on v7's window", True)):
        d = {n: (rows[n]["p7"], extra(rows[n], with_expert), rows[n]["y"]) for n in rows}
        loso = {}
        for n in fit_names:
            rest = [m for m in fit_names if m != n]
            _, l2, nw = choose(d, rest)
            comb = fit(d, rest, l2, nw)
            loso[n] = round(set_score(comb.apply(d[n][0], d[n][1]), d[n][2], n in NATURAL_SETS), 4)
        score, l2, nw = choose(d, fit_names)
        comb = fit(d, fit_names, l2, nw)
        variants[label] = {"loso": loso, "loso_mean": round(float(np.mean(list(loso.values()))), 4), "l2": l2,
                           "natural_weight": nw, "out": {n: comb.apply(d[n][0], d[n][1]) for n in report_names},
                           "weights": np.round(comb.weights, 3).tolist(), "bias": np.round(comb.bias, 3).tolist()}
    variants["v7 + slots (shipped)"] = {"out": {n: shipped.apply(rows[n]["p7"], rows[n]["feats"]) for n in report_names}}
    variants["v7 alone"] = {"out": {n: rows[n]["p7"] for n in report_names}}
    variants["expert alone (own windows)"] = {"out": {n: rows[n]["peo"] for n in report_names}}
    from bench_verifier_heldout import _binary, _userdev

    result = {"expert": ex.name, "variants": {}}
    for label, v in variants.items():
        res = {k: v[k] for k in ("loso", "loso_mean", "l2", "natural_weight", "weights", "bias") if k in v}
        for n in report_names:
            r = rows[n]
            m = v["out"][n]
            res[n[2:]] = _userdev(m, list(r["y"]), list(r["kinds"])) if n == "R userdev" else _binary(m, r["y"])
        result["variants"][label] = res
        print(label, json.dumps(res), flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
