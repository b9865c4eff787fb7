"""The shipped reading's P_supported, with C against N split by a second verifier (README.md).

    OMP_NUM_THREADS=1 python experiments/2026-11-29-expert-splits-not-supported/run.py \
        --cache CACHE_DIR --expert NAME [--expert NAME ...]

CACHE_DIR: the window reads of ../2026-11-29-verifier-two-experts/run.py (v7's and each
expert's, by verifier name); no verifier runs here.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "2026-11-29-verifier-two-experts"))
V7 = "verifier:franq-verifier-minilm-v7"


def load(cache: Path, name: str, set_name: str):
    d = np.load(cache / f"{name}--{set_name.replace(' ', '_').replace('/', '_')}.npz")
    return d["p"], d["off"]


def split(p_ship: np.ndarray, pek: np.ndarray) -> np.ndarray:
    r = pek[:, 1] / np.clip(pek[:, 1] + pek[:, 2], 1e-9, None)
    rest = 1.0 - p_ship[:, 0]
    return np.column_stack([p_ship[:, 0], rest * r, rest * (1 - r)])


def cells(p: np.ndarray, y: np.ndarray, kind: str) -> dict:
    arg = p.argmax(axis=1)
    if kind == "pairs":  # 0 S, 1 C, 2 N
        c, n = y == 1, y == 2
        return {"C read C": round(float((arg[c] == 1).mean()), 4), "N read C": round(float((arg[n] == 1).mean()), 4),
                "BAcc C vs N": round(float(((arg[c] == 1).mean() + (arg[n] != 1).mean()) / 2), 4)}
    if kind == "natural":  # y: 1 supported, 0 not
        ns = y == 0
        return {"not supported": int(ns.sum()), "read C": round(float((arg[ns] == 1).mean()), 4)}
    if kind == "contra":
        return {"claims": len(y), "read C": round(float((arg == 1).mean()), 4)}
    lab = np.array(y)  # userdev
    out = {}
    for g in ("contradicted", "not_mentioned_true", "not_mentioned_false"):
        m = lab == g
        out[g] = {"n": int(m.sum()), "read C": round(float((arg[m] == 1).mean()), 4),
                  "read N": round(float((arg[m] == 2).mean()), 4)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("--expert", action="append", required=True)
    ap.add_argument("--out", default=str(Path(__file__).with_name("result.json")))
    args = ap.parse_args(argv)
    from run import sets

    from franq.verifier import Verifier, shipped_verifier_dir
    from franq.verifier.aggregate import relevant
    from franq.verifier.combiner import load_combiner
    from franq.verifier.slots import features

    cache = Path(args.cache)
    shipped = load_combiner(Verifier(shipped_verifier_dir()))
    kinds = {"synthetic-nq": "pairs", "synthetic-expertqa": "pairs", "nq-declarative": "pairs",
             "R wice heldout": "natural", "R expertqa rand_test (400)": "natural",
             "R expertqa contradicted (199)": "contra", "R userdev": "userdev"}
    data = {k: v for k, v in sets().items() if k in kinds}
    result = {}
    for name, (items, y, _) in data.items():
        p7w, off = load(cache, V7, name)
        p7, k7 = [], []
        for a, b in zip(off[:-1], off[1:]):
            if a == b:
                p7.append([0, 0, 1]); k7.append(None)
                continue
            q, k = relevant(p7w[a:b])
            p7.append(q); k7.append(a + k)
        p_ship = shipped.apply(np.array(p7), np.array([features(c, list(p)) for p, c in items]))
        y = np.asarray(y)
        row = {"shipped": cells(p_ship, y, kinds[name]),
               "needs the expert (P_s < .5)": round(float((p_ship[:, 0] < 0.5).mean()), 4)}
        for ex in args.expert:
            pew, off_e = load(cache, ex, name)
            assert (off == off_e).all()
            pek = np.array([[0, 0, 1] if k is None else pew[k] for k in k7])
            row[ex] = cells(split(p_ship, pek), y, kinds[name])
        result[name] = row
        print(name, json.dumps(row), flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
