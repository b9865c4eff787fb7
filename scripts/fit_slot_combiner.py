"""Fit the verifier's slot-check combiner (franq.verifier.combiner) for one verifier, on
data made only from SOURCES.md files and never read by a report: the pair dev sets
(datasets/verifier/dev: synthetic-nq, synthetic-expertqa, nq-declarative; three-way labels)
and the fit splits of the natural long-evidence sets (WiCE fit, 400 ExpertQA train claims:
support labels: a supported claim "supported", an unsupported one "not supported", i.e.
contradicted or not mentioned, which a support label does not tell apart; never
datasets/userdev, WiCE held out or ExpertQA rand_test). Each set weighs the same in the fit,
the two natural ones times a chosen weight.

    OMP_NUM_THREADS=1 python scripts/fit_slot_combiner.py [--verifier DIR] [--out FILE]
        [--report benchmarks/results/slot-combiner.md] [--cache FILE.npz]

The combiner is softmax(log P_verifier + W f + b) (W: the slot mismatches, b: a per-class
bias). Its L2 penalty and the natural sets' weight are chosen on these sets by one rule
(experiments/2026-11-28-slot-combiner-bias says what had been read before it was fixed): the mean over the five sets of the three-way accuracy
(pair sets) and of (BAcc + AUROC of P_supported) / 2 (natural sets). The table shows each set
held apart (the combiner fitted on the other four) against the verifier alone. The verifier
reads each pair as franq does (windows of each passage, the card's aggregation); the
natural sets' claims were in the verifier's training pairs (each against one window), so
their numbers lean in its favour. ``--out`` (default: slot-combiner.json in the verifier
directory) is what ``[faithfulness.verifier] slot_check`` reads; the file's ``version`` is one
more than the combiner it replaces (``--version``), and the backend's name carries it from 2
on (``...:slots2``): refit the calibrators of the verifier stack after it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from franq.fit.verifier.eval import COMBINER_PAIR_SETS as PAIR_SETS  # what it is fitted on: combiner_sets

ROOT = Path(__file__).resolve().parents[1]
NATURAL_SETS = ("wice fit", "expertqa train (400)")
L2S = (0.3, 1.0, 3.0)
NATURAL_WEIGHTS = (1.0, 1.5, 3.0)


def load_set(name: str) -> list[dict]:
    path = ROOT / "datasets" / "verifier" / "dev" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def set_score(p3: np.ndarray, y: np.ndarray, natural: bool) -> float:
    """What the choice rule averages: 3-way accuracy, or (BAcc + AUROC of P_s) / 2 on support labels."""
    c = cells(p3, y)
    return (c["bacc_s"] + c["auroc_s"]) / 2 if natural else c["acc3"]


def cells(p3: np.ndarray, y: np.ndarray) -> dict:
    from franq.evaluation.metrics import auroc, balanced_accuracy

    s = (y == 0).astype(int)
    return {"acc3": float(np.mean(p3.argmax(1) == y)) if (y < 3).all() else float("nan"), "bacc_s": balanced_accuracy(p3[:, 0], s),
            "auroc_s": auroc(p3[:, 0], s),
            "contradicted_argmax_c": float(np.mean(p3[y == 1].argmax(1) == 1)) if (y == 1).any() else float("nan"),
            "nm_argmax_c": float(np.mean(p3[y == 2].argmax(1) == 1)) if (y == 2).any() else float("nan")}


def fit(data: dict, names, l2: float, natural_weight: float, meta=None):
    from franq.verifier.combiner import fit_combiner

    weight = [np.full(len(data[n][2]), (natural_weight if n in NATURAL_SETS else 1.0) / len(data[n][2])) for n in names]
    return fit_combiner(np.vstack([data[n][0] for n in names]), np.vstack([data[n][1] for n in names]),
                        np.concatenate([data[n][2] for n in names]), l2=l2, bias=True,
                        sample_weight=np.concatenate(weight), meta=meta)


def choose(data: dict, names) -> tuple[float, float, float]:
    """(score, l2, natural weight) of the best grid point on ``names``, fitted and scored on them."""
    best = None
    for l2 in L2S:
        for nw in NATURAL_WEIGHTS:
            comb = fit(data, names, l2, nw)
            score = float(np.mean([set_score(comb.apply(data[n][0], data[n][1]), data[n][2], n in NATURAL_SETS)
                                   for n in names]))
            if best is None or score > best[0]:
                best = (score, l2, nw)
    return best


def held_apart(data: dict, names, over=None) -> dict[str, float]:
    """Each set of ``over`` (default: ``names``) scored by the combiner chosen and fitted on the
    other sets of ``names`` (what the experiments compare input sets by), rounded to 4 places."""
    out = {}
    for n in over or names:
        rest = [m for m in names if m != n]
        _, l2, nw = choose(data, rest)
        out[n] = round(set_score(fit(data, rest, l2, nw).apply(*data[n][:2]), data[n][2], n in NATURAL_SETS), 4)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--verifier", default=None, help="A franq verifier directory (default: the shipped one).")
    ap.add_argument("--out", default=None, help="Combiner file (default: DIR/slot-combiner.json).")
    ap.add_argument("--report", default=str(ROOT / "benchmarks" / "results" / "slot-combiner.md"))
    ap.add_argument("--cache", default=None, help="An .npz keeping the verifier's probabilities between runs.")
    ap.add_argument("--version", type=int, default=None, help="The fit's version, which the backend's name carries "
                    "from 2 on (default: one more than the combiner at --out, 1 for a new file).")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from franq.fit.verifier.eval import combiner_sets
    from franq.verifier import Verifier, shipped_verifier_dir
    from franq.verifier.combiner import COMBINER_FILE, next_version
    from franq.verifier.slots import features

    v = Verifier(args.verifier or shipped_verifier_dir())
    cache = Path(args.cache) if args.cache else None
    kept = dict(np.load(cache)) if cache and cache.is_file() else {}
    sets = combiner_sets(ROOT / "datasets")
    data = {}
    for name, (items, y) in sets.items():
        key = f"{v.name}|{name}"
        if key not in kept:
            verdicts = v.verify(items)
            kept[key] = np.array([[d.p_supported, d.p_contradicted, d.p_not_mentioned] for d in verdicts])
        feats = np.array([features(claim, passages) for passages, claim in items])
        data[name] = (kept[key], feats, np.array(y))
        print(f"{name}: {len(y)} claims read", flush=True)
    if cache:
        np.savez(cache, **kept)
    names = list(data)
    lines = [("| held-apart set | claims | 3-way acc | BAcc P_s@0.5 | AUROC P_s | contradicted: argmax C "
              "| not mentioned: argmax C | chosen on the rest (L2, natural weight) |"), "|---|---:|---|---|---|---|---|---|"]
    for name in names:
        rest = [n for n in names if n != name]
        _, l2, nw = choose(data, rest)
        comb = fit(data, rest, l2, nw)
        p3, feats, y = data[name]
        a, b = cells(p3, y), cells(comb.apply(p3, feats), y)
        row = [f"{a[k]:.3f} -> {b[k]:.3f}" if np.isfinite(a[k]) else "-" for k in
               ("acc3", "bacc_s", "auroc_s", "contradicted_argmax_c", "nm_argmax_c")]
        lines.append(f"| {name} | {len(y)} | " + " | ".join(row) + f" | {l2}, {nw} |")
        print(lines[-1], flush=True)
    score, l2, nw = choose(data, names)
    files = {n: hashlib.sha256((ROOT / "datasets" / "verifier" / "dev" / f"{n}.jsonl").read_bytes()).hexdigest()
             for n in PAIR_SETS}
    for n, f in (("wice fit", "wice/fit.jsonl"), ("expertqa train (400)", "expertqa/train.jsonl")):
        files[n] = hashlib.sha256((ROOT / "datasets" / f).read_bytes()).hexdigest()
    out = Path(args.out) if args.out else v.path / COMBINER_FILE
    meta = {"verifier": v.name, "version": args.version or next_version(out), "fitted_on": files, "pairs": int(sum(len(data[n][2]) for n in names)), "l2": l2,
            "natural_weight": nw, "choice_score": round(score, 4),
            "command": "python scripts/fit_slot_combiner.py " + " ".join(
                a for a in (argv if argv is not None else sys.argv[1:]) if a != args.cache and a != "--cache")}
    comb = fit(data, names, l2, nw, meta)
    out.write_text(comb.to_json() + "\n", encoding="utf-8")
    text = (f"# Slot-check combiner, held apart\n\n`{meta['command'].strip()}`\n\n{v.name}; each row: the verifier "
            "alone -> with the slot check, the combiner fitted on the other four sets (softmax of the verifier's "
            "log-probabilities plus weighted slot mismatches of franq/verifier/slots.py and a per-class bias; "
            "L2 penalty and natural sets' weight chosen on those four). Natural sets: support labels, an "
            "unsupported claim counted as 'not supported' (contradicted or not mentioned: its likelihood P_c + P_n), so "
            "their 3-way and argmax-C columns are empty. "
            f"Written to {out.name}: fitted on all five ({meta['pairs']} claims), L2 {l2}, natural weight {nw}, "
            f"bias {comb.bias.round(3).tolist()}.\n\n" + "\n".join(lines) + "\n")
    print(text)
    Path(args.report).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
