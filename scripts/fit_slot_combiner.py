"""Fit the verifier's slot-check combiner (franq.verifier.slots) for one verifier, on the
pair dev sets made only from SOURCES.md files (datasets/verifier/dev: synthetic-nq,
synthetic-expertqa, nq-declarative; never datasets/userdev), and measure it held apart:
each set scored by a combiner fitted on the other two, against the verifier alone.

    OMP_NUM_THREADS=1 python scripts/fit_slot_combiner.py [--verifier DIR] [--out FILE]
        [--report benchmarks/results/slot-combiner.md]

The verifier reads each pair as franq does (the premise is one passage, cut into windows,
aggregated by the card's rule). ``--out`` (default: slot-combiner.json in the verifier
directory) is what ``[faithfulness.verifier] slot_check`` reads.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SETS = ("synthetic-nq", "synthetic-expertqa", "nq-declarative")


def load_set(name: str) -> list[dict]:
    path = ROOT / "datasets" / "verifier" / "dev" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def scores(p3: np.ndarray, y: np.ndarray) -> dict:
    from franq.evaluation.metrics import auroc, balanced_accuracy

    nm = y == 2
    return {"acc3": float(np.mean(p3.argmax(1) == y)), "bacc_s": balanced_accuracy(p3[:, 0], y == 0),
            "auroc_s": auroc(p3[:, 0], y == 0),
            "contradicted_argmax_c": float(np.mean(p3[y == 1].argmax(1) == 1)),
            "nm_argmax_c": float(np.mean(p3[nm].argmax(1) == 1)) if nm.any() else float("nan")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--verifier", default=None, help="A franq verifier directory (default: the shipped one).")
    ap.add_argument("--out", default=None, help="Combiner file (default: DIR/slot-combiner.json).")
    ap.add_argument("--report", default=str(ROOT / "benchmarks" / "results" / "slot-combiner.md"))
    ap.add_argument("--l2", type=float, default=1.0, help="L2 penalty on the combiner's weights.")
    ap.add_argument("--cache", default=None, help="An .npz keeping the verifier's probabilities between runs.")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from franq.verifier import Verifier, shipped_verifier_dir
    from franq.verifier.slots import COMBINER_FILE, features, fit_combiner

    v = Verifier(args.verifier or shipped_verifier_dir())
    cache = Path(args.cache) if args.cache else None
    kept = dict(np.load(cache)) if cache and cache.is_file() else {}
    data = {}
    for name in SETS:
        rows = load_set(name)
        items = [([r["premise"]], r["claim"]) for r in rows]
        key = f"{v.name}|{name}"
        if key not in kept:
            verdicts = v.verify(items)
            kept[key] = np.array([[d.p_supported, d.p_contradicted, d.p_not_mentioned] for d in verdicts])
        p3 = kept[key]
        feats = np.array([features(claim, passages) for passages, claim in items])
        data[name] = (p3, feats, np.array([int(r["label"]) for r in rows]))
        print(f"{name}: {len(rows)} pairs read", flush=True)
    if cache:
        np.savez(cache, **kept)
    lines = [("| held-apart set | pairs | 3-way acc | BAcc P_s@0.5 | AUROC P_s | contradicted: argmax C "
              "| not mentioned: argmax C |"), "|---|---:|---|---|---|---|---|"]
    for name in SETS:
        rest = [n for n in SETS if n != name]
        comb = fit_combiner(np.vstack([data[n][0] for n in rest]), np.vstack([data[n][1] for n in rest]),
                            np.concatenate([data[n][2] for n in rest]), l2=args.l2)
        p3, feats, y = data[name]
        a, b = scores(p3, y), scores(comb.apply(p3, feats), y)
        cells = [f"{a[k]:.3f} -> {b[k]:.3f}" for k in ("acc3", "bacc_s", "auroc_s", "contradicted_argmax_c",
                                                        "nm_argmax_c")]
        lines.append(f"| {name} | {len(y)} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    files = {n: hashlib.sha256((ROOT / "datasets" / "verifier" / "dev" / f"{n}.jsonl").read_bytes()).hexdigest()
             for n in SETS}
    meta = {"verifier": v.name, "fitted_on": files, "pairs": int(sum(len(data[n][2]) for n in SETS)), "l2": args.l2,
            "command": "python scripts/fit_slot_combiner.py " + " ".join(
                a for a in (argv if argv is not None else sys.argv[1:]) if a != args.cache and a != "--cache")}
    comb = fit_combiner(np.vstack([data[n][0] for n in SETS]), np.vstack([data[n][1] for n in SETS]),
                        np.concatenate([data[n][2] for n in SETS]), l2=args.l2, meta=meta)
    out = Path(args.out) if args.out else v.path / COMBINER_FILE
    out.write_text(comb.to_json() + "\n", encoding="utf-8")
    text = (f"# Slot-check combiner, held apart\n\n`{meta['command'].strip()}`\n\n{v.name}; each row: the verifier "
            f"alone -> with the slot check, the combiner fitted on the other two sets (softmax of the verifier's "
            f"log-probabilities plus weighted slot mismatches of franq/verifier/slots.py, L2 {args.l2}). The combiner is fitted on all three ({meta['pairs']} pairs) "
            f"and written to {out.name}.\n\n" + "\n".join(lines) + "\n")
    print(text)
    Path(args.report).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
