"""How the verifier's windows combine per claim: every aggregation rule
(franq.verifier.aggregate) on one pass of a verifier over long evidence, on several sets.

    OMP_NUM_THREADS=1 python benchmarks/bench_verifier_aggregation.py [--model DIR] [--window-words N]
        [--sets reported|fit] [--out benchmarks/results/verifier-aggregation.md]

Sets (franq.fit.verifier.eval.long_evidence_sets; citation markers stripped, windows read
without passage titles, as franq reads them): WiCE held out (144 claims, whole Wikipedia
pages), 400 ExpertQA rand_test claims of the 205 answers no fit has seen, and the 199 of
those with one fact contradicted by a typed substitution (all false). ``--sets fit``: the fit
splits instead (WiCE fit, 400 ExpertQA train claims; franq.fit.verifier.eval.fit_evidence_sets), which
no report reads, to choose window settings away from the reported sets. The verifier runs
once per set over every (window, claim) pair; each rule is then applied to the same window
probabilities. Per rule and set: balanced accuracy of P_supported at 0.5, AUROC of
P_supported and of P_supported - P_contradicted, the share of supported claims with
P_contradicted > 0.5, and how many unsupported claims get P_contradicted the largest of the
three. Writes the table and the
command that made it.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RULE_SETTINGS = [("relevant", 0.5), ("max_support", 0.3), ("max_support", 0.5), ("max_support", 0.7),
                 ("decisive", 0.5), ("max", 0.5)]


def _row(name: str, rule: str, relevance: float, m: np.ndarray, y: np.ndarray) -> str:
    from franq.evaluation.metrics import auroc, balanced_accuracy

    s, c = m[:, 0], m[:, 1]
    both = 0 < y.sum() < len(y)
    cells = ([f"{balanced_accuracy(s, y):.3f}", f"{auroc(s, y):.3f}",
              f"{auroc(s - c, y):.3f}", f"{np.mean(c[y == 1] > 0.5):.2f}"] if both else ["", "", "", ""])
    contradicted = int(np.sum((m.argmax(1) == 1) & (y == 0)))
    shown = f"{relevance:g}" if rule == "max_support" else "-"  # the only rule that reads it
    return f"| {name} | {rule} | {shown} | " + " | ".join(cells) + f" | {contradicted} of {int((y == 0).sum())} |"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="A franq verifier directory (default: the shipped one).")
    ap.add_argument("--window-words", type=int, default=None, help="Window size in words (default: the card's).")
    ap.add_argument("--sets", choices=("reported", "fit"), default="reported",
                    help="reported: WiCE held out, ExpertQA rand_test, contradicted; fit: the fit splits.")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verifier-aggregation.md"))
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    from franq.fit.verifier.eval import fit_evidence_sets, long_evidence_sets
    from franq.verifier import Verifier, aggregate
    from franq.verifier.model import shipped_verifier_dir

    v = Verifier(args.model or shipped_verifier_dir(), window_words=args.window_words)
    rows = ["| set | rule | relevance | BAcc P_s@0.5 | AUROC P_s | AUROC P_s - P_c | supported: P_c > 0.5 "
            "| unsupported: P_c the largest |", "|---|---|---|---|---|---|---|---|"]
    timing = []
    sets = fit_evidence_sets if args.sets == "fit" else long_evidence_sets
    for name, (items, y) in sets(ROOT / "datasets").items():
        t0 = time.perf_counter()
        per_claim = v.window_probabilities(items)
        seconds = time.perf_counter() - t0
        timing.append(f"{name}: {len(y)} claims, {sum(len(ws) for ws, _ in per_claim)} windows, {seconds:.0f} s")
        for rule, relevance in RULE_SETTINGS:
            m = np.array([aggregate(probs, rule, relevance=relevance)[0] for _, probs in per_claim])
            rows.append(_row(name, rule, relevance, m, y))
            print(rows[-1], flush=True)
    cmd = "OMP_NUM_THREADS=1 python benchmarks/bench_verifier_aggregation.py" + (f" --model {args.model}" if args.model else "") + (
        f" --window-words {args.window_words}" if args.window_words else "") + (
        f" --sets {args.sets}" if args.sets != "reported" else "") + (
        f" --out {args.out}" if args.out != ap.get_default("out") else "")
    where = v.path.resolve().relative_to(ROOT) if v.path.resolve().is_relative_to(ROOT) else v.path
    title = "Verifier aggregation rules" + (" on the fit splits (window-size check)" if args.sets == "fit" else "")
    text = (f"# {title}\n\n`{cmd}`\n\nmodel: {v.name} ({where}); windows of {v.window_words} words, "
            f"{v.overlap_sentences} sentence(s) overlap, max_length {v.max_length}, no passage titles; "
            f"{args.threads} torch thread(s) on {v.device}. " + "; ".join(timing) + ".\n\n" + "\n".join(rows) + "\n")
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
