"""The slot combiner refitted with a sixth fit set, the contrastive pairs' dev split (every
typed slot edited, beside paraphrased supported twins and same-topic not-mentioned claims),
against the combiner fitted on today's five sets and the shipped one. See README.md.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-combiner-contrast-dev/run.py \
        --pairs PAIRS-V8.json.xz --cache CACHE_DIR [--n 600]

PAIRS-V8: `franq fit verifier --recipe v8 --write-pairs FILE -o unused` (its ``dev`` split,
``contrast``: held apart by document; v7 was never trained on contrastive pairs).
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import lzma
import random
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "experiments" / "2026-11-29-verifier-two-experts"))
CONTRAST = "contrast dev"


def contrast_dev(path: str, n: int) -> tuple[list, np.ndarray]:
    with lzma.open(path) as f:
        rows = json.loads(f.read())["pairs"]["dev"]["contrast"]
    rng = random.Random(0)
    out = []
    for label in (0, 1, 2):
        of = [r for r in rows if r["label"] == label]
        out += rng.sample(of, min(n // 3, len(of)))
    return [([r["premise"]], r["claim"]) for r in out], np.array([r["label"] for r in out])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--out", default=str(HERE / "result.json"))
    ap.add_argument("--write", default=None, help="write the six-set combiner (version 2) to this file")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from bench_verifier_heldout import USER_SETS, report_read, userdev_items
    from fit_slot_combiner import choose, fit, held_apart
    from run import sets, windows_of

    from franq.evaluation.obvious_cases import CASES
    from franq.verifier import Verifier, shipped_verifier_dir
    from franq.verifier.aggregate import relevant
    from franq.verifier.combiner import load_combiner
    from franq.verifier.slots import features

    cache = Path(args.cache)
    v7 = Verifier(shipped_verifier_dir())
    data = {k: v for k, v in sets().items() if k != "R userdev"}
    data[CONTRAST] = (*contrast_dev(args.pairs, args.n), None)
    for name, path in USER_SETS.items():
        items, labels, kinds = userdev_items(path)
        data["R " + name] = (items, np.array(labels), np.array(kinds))
    obvious = [([p], c) for _, p, s, c in CASES for c in (s, c)]
    data["R obvious"] = (obvious, np.array([1, 0] * len(CASES)), None)
    rows = {}
    for name, (items, y, kinds) in data.items():
        pw, off = windows_of(v7, name, items, cache)
        p3 = np.array([relevant(pw[a:b])[0] if b > a else [0, 0, 1] for a, b in itertools.pairwise(off)])
        rows[name] = (p3, np.array([features(c, list(p)) for p, c in items]), y, kinds)
        print(f"{name}: {len(items)} claims", flush=True)
    d = {n: r[:3] for n, r in rows.items()}
    five = [n for n in rows if not n.startswith("R ") and n != CONTRAST]
    six = five + [CONTRAST]
    report = [n for n in rows if n.startswith("R ")]
    variants = {"v7 alone": None, "v7 + slots (shipped)": load_combiner(v7)}
    result = {"n_contrast": len(d[CONTRAST][2]), "variants": {}}
    for label, names in (("v7 + slots (refit, five sets)", five), ("v7 + slots (refit, six sets)", six)):
        loso = held_apart(d, names, over=six)
        _, l2, nw = choose(d, names)
        variants[label] = fit(d, names, l2, nw)
        result["variants"][label] = {"loso": loso, "loso_mean_five": round(float(np.mean([loso[n] for n in five])), 4),
                                     "l2": l2, "natural_weight": nw,
                                     "weights": np.round(variants[label].weights, 3).tolist(),
                                     "bias": np.round(variants[label].bias, 3).tolist()}
    if args.write:
        six_fit = result["variants"]["v7 + slots (refit, six sets)"]
        meta = {"verifier": v7.name, "version": 2, "pairs": int(sum(len(d[n][2]) for n in six)),
                "l2": six_fit["l2"], "natural_weight": six_fit["natural_weight"], "fitted_on": six,
                "command": "python experiments/2026-11-29-combiner-contrast-dev/run.py --write FILE"}
        comb = dataclasses.replace(variants["v7 + slots (refit, six sets)"], meta=meta)  # the fit above, with its record
        Path(args.write).write_text(comb.to_json() + "\n", encoding="utf-8")
    for label, comb in variants.items():
        res = result["variants"].setdefault(label, {})
        for n in report + [CONTRAST]:
            p3, feats, y, kinds = rows[n]
            m = p3 if comb is None else comb.apply(p3, feats)
            if n == CONTRAST:
                res[n] = {"acc3": round(float(np.mean(m.argmax(1) == y)), 4),
                          "contradicted_argmax_c": round(float(np.mean(m[y == 1].argmax(1) == 1)), 4),
                          "supported_kept": round(float(np.mean(m[y == 0, 0] >= 0.5)), 4),
                          "nm_argmax_c": round(float(np.mean(m[y == 2].argmax(1) == 1)), 4)}
            else:
                key, res[key] = report_read(n, m, y, kinds)
        print(label, json.dumps(res), flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
