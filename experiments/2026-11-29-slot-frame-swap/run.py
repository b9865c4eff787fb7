"""A slot swapped in a matching frame, as slot-combiner inputs: the claim's content words, less
the words of its slots the passages' best speaking sentence does not state, are found in that
sentence (with the sentence after it when that one refers back), and the sentence states a slot
of the same type the claim does not ("The capital of Australia is Sydney." against "Canberra is
the capital city of Australia."). See README.md beside this file.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-slot-frame-swap/run.py --cache CACHE_DIR

CACHE_DIR: v7's window probabilities per set, as experiments/2026-11-29-verifier-two-experts/run.py
--only-cache v7 and experiments/2026-11-29-combiner-contrast-dev/run.py write them.
"""
from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for sub in ("scripts", "benchmarks", "experiments/2026-11-29-verifier-two-experts"):
    sys.path.insert(0, str(ROOT / sub))
NEAR = (0.6, 0.8)
KINDS = ("entity", "entity from outside", "number")


def frame_swaps(claim: str, passages: list[str], near: float) -> tuple[float, float, float]:
    """``(entity swap, entity swap from outside, number swap)``: 1 where the claim's frame (its content words less the words
    of its unstated slots of that type) is covered at ``near`` by the best speaking sentence and its
    continuation, the claim has a slot of that type they do not state, and they state one of that
    type the claim does not. Numbers and years count as one type (compatible units for numbers). "From
    outside": the claim's unstated entity is in none of the passages."""
    from franq.verifier.slots import (
        _close,
        _compatible,
        _content,
        _has_entity,
        continuations,
        extract,
        speaking_sentences,
    )

    sp = speaking_sentences(claim, passages, top=1)
    if not sp:
        return 0.0, 0.0, 0.0
    text = " ".join([sp[0][1], *continuations(sp, passages)])
    low = text.lower()
    c, s = extract(claim), extract(text)
    words = _content(text)
    out = []
    # entities
    missing = [e for e in dict.fromkeys(c.entities) if not _has_entity(e, low)]
    extra = [e for e in dict.fromkeys(s.entities) if not _has_entity(e, claim.lower())]
    out.append((missing, bool(extra), " ".join(missing)))
    everywhere = " ".join(passages).lower()
    outside = [e for e in missing if not _has_entity(e, everywhere)]
    out.append((outside, bool(extra), " ".join(missing)))
    # numbers and years
    miss_n = [v for v, u in c.numbers if not any(_close(v, w) and _compatible(u, x) for w, x in s.numbers)]
    extra_n = [w for w, x in s.numbers if not any(_close(v, w) and _compatible(u, x) for v, u in c.numbers)]
    miss_y = [y for y in c.years if y not in s.years]
    extra_y = [y for y in s.years if y not in c.years]
    gone = " ".join(m.group(0) for m in re.finditer(r"\S*\d\S*", claim))
    out.append((miss_n + miss_y, bool((miss_n and extra_n) or (miss_y and extra_y)), gone))
    res = []
    for missing, other, gone_text in out:
        if not missing or not other:
            res.append(0.0)
            continue
        frame = _content(claim) - _content(gone_text)
        res.append(float(bool(frame) and len(frame & words) / len(frame) >= near))
    return tuple(res)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("--out", default=str(HERE / "result.json"))
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from bench_verifier_heldout import USER_SETS, report_read, userdev_items
    from fit_slot_combiner import choose, fit, held_apart
    from run import sets, windows_of

    from franq.evaluation.obvious_cases import CASES
    from franq.verifier import Verifier, shipped_verifier_dir
    from franq.verifier.aggregate import relevant
    from franq.verifier.slots import features

    cache = Path(args.cache)
    v7 = Verifier(shipped_verifier_dir())
    data = {k: v for k, v in sets().items() if k != "R userdev"}
    for name, path in USER_SETS.items():
        items, labels, kinds = userdev_items(path)
        data["R " + name] = (items, np.array(labels), np.array(kinds))
    data["R obvious"] = ([([p], c) for _, p, s, c in CASES for c in (s, c)], np.array([1, 0] * len(CASES)), None)
    rows = {}
    for name, (items, y, kinds) in data.items():
        pw, off = windows_of(v7, name, items, cache)
        p3 = np.array([relevant(pw[a:b])[0] if b > a else [0, 0, 1] for a, b in itertools.pairwise(off)])
        feats = np.array([features(c, list(p)) for p, c in items])
        swaps = np.array([[x for near in NEAR for x in frame_swaps(c, list(p), near)] for p, c in items])
        rows[name] = (p3, feats, swaps, y, kinds)
        print(f"{name}: {len(items)} claims; swaps fire {swaps.sum(0).astype(int).tolist()}", flush=True)
    fires = {}
    for n, (_, _, sw, y, _) in rows.items():
        fires[n] = {str(lab): sw[y == lab].sum(0).astype(int).tolist() + [int((y == lab).sum())]
                    for lab in sorted(set(y.tolist()), key=str)}
    fit_names = [n for n in rows if not n.startswith("R ")]
    columns = [f"{k} {near}" for near in NEAR for k in KINDS]
    variants = {"shipped features (refit)": []}
    for near in NEAR:
        variants[f"+ entity and number swap in a frame ({near})"] = [columns.index(f"{k} {near}")
                                                                      for k in ("entity", "number")]
        variants[f"+ entity from outside and number swap in a frame ({near})"] = [
            columns.index(f"{k} {near}") for k in ("entity from outside", "number")]
    result = {"columns": columns, "fires (per label: the columns, then the label's claims)": fires, "variants": {}}
    for label, cols in variants.items():
        d = {n: (r[0], np.hstack([r[1], r[2][:, cols]]), r[3]) for n, r in rows.items()}
        loso = held_apart(d, fit_names)
        _, l2, nw = choose(d, fit_names)
        comb = fit(d, fit_names, l2, nw)
        res = {"loso": loso, "loso_mean": round(float(np.mean(list(loso.values()))), 4), "l2": l2,
               "natural_weight": nw, "weights_c_n_of_new": np.round(comb.weights[1:, -len(cols):], 3).tolist()
               if cols else []}
        for n, (_, _, _, y, kinds) in rows.items():
            if n.startswith("R "):
                key, res[key] = report_read(n, comb.apply(*d[n][:2]), y, kinds)
        result["variants"][label] = res
        print(label, json.dumps(res), flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
