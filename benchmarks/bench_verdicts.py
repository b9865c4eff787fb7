"""The verdict is the product (issue 25): the default stack (embedded model, shipped
verifier, its three-condition calibrator) on the bundled example and on hand-written answers
whose claims the passage obviously supports or contradicts (one fact swapped: a city, a
year, an author, a number, a material, a negation). Prints a table and writes it, with the
command, to benchmarks/results/verdicts.md.

    OMP_NUM_THREADS=1 python benchmarks/bench_verdicts.py [--out benchmarks/results/verdicts.md]

The cases are franq.evaluation.obvious_cases (general knowledge, stated in their passages);
nothing is fitted on them.
"""
from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path

from franq.evaluation.obvious_cases import CASES

ROOT = Path(__file__).resolve().parents[1]


def _p(c) -> float:
    """The P(true) the verdict reads: calibrated when a calibrator ran, else the raw mix."""
    return c.p_true_calibrated if c.p_true_calibrated is not None else c.p_true_raw


def _right(c, want: str) -> bool:
    """The verdict is on the right side of 0.5 for a claim whose truth is ``want``."""
    return (_p(c) >= 0.5) == (want == "true")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verdicts.md"))
    ap.add_argument("--verifier", default=None, help="A verifier directory (default: the shipped one).")
    ap.add_argument("--calibrator", default=None, help="A calibrator file (default: the shipped one).")
    ap.add_argument("--combiner", default=None, help="A slot combiner file (default: the verifier directory's).")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    import franq

    config: dict = {}
    if args.verifier or args.combiner:
        config["faithfulness"] = {"verifier": {k: v for k, v in (("model", args.verifier),
                                                                 ("slot_combiner", args.combiner)) if v}}
    if args.calibrator:
        config["calibration"] = {"calibrator": args.calibrator}
    fr = franq.Franq.from_config(franq.FranqConfig.from_dict(config))
    ex = json.loads(resources.files("franq").joinpath("data/example.json").read_text(encoding="utf-8"))
    rows = []
    res = fr.score(ex["question"], ex["passages"], ex["answer"])
    for c in res.scored:
        want = "false" if any(w in c.claim.text for w in ("solid gold", "Berlin")) else "true"
        rows.append(("bundled example", c.claim.text, want, c))
    for q, passage, good, bad in CASES:
        for answer, want in ((good, "true"), (bad, "false")):
            for c in fr.score(q, [passage], answer).scored:
                rows.append(("hand-written", c.claim.text, want, c))
    right = sum(_right(c, want) for _, _, want, c in rows)
    lines = [f"Stack: {res.stack.model}, faithfulness {res.stack.faithfulness}, calibration {res.calibration}.", "",
             "| set | claim | truth | P(true) | P_s | P_c | P_n | verdict right |", "|---|---|---|---|---|---|---|---|"]
    for where, text, want, c in rows:
        lines.append(f"| {where} | {text} | {want} | {_p(c):.3f} | {c.p_faithful:.3f} | {c.p_contradicted:.3f} | "
                     f"{c.p_not_mentioned:.3f} | {'yes' if _right(c, want) else '**no**'} |")
    for name, sel in (("true claims", "true"), ("false claims", "false")):
        sub = [c for _, _, w, c in rows if w == sel]
        good = sum(_right(c, sel) for c in sub)
        lines.append(f"\n{name}: {good} of {len(sub)} on the right side of 0.5.")
    lines.append(f"\nAll: {right} of {len(rows)} verdicts right.")
    table = "\n".join(lines)
    print(table)
    cmd = "OMP_NUM_THREADS=1 python benchmarks/bench_verdicts.py" + "".join(
        f" --{k} {v}" for k, v in (("verifier", args.verifier), ("calibrator", args.calibrator),
                                   ("combiner", args.combiner)) if v)
    Path(args.out).write_text(f"# Verdicts of the default stack on obvious cases (issue 25)\n\n`{cmd}`\n\n{table}\n",
                              encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
