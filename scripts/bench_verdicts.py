"""The verdict is the product (issue 25): the default stack (embedded model, shipped
verifier, its three-condition calibrator) on the bundled example and on hand-written answers
whose claims the passage obviously supports or contradicts (one fact swapped: a city, a
year, an author, a number, a material, a negation). Prints a table and writes it, with the
command, to benchmarks/results/verdicts.md.

    OMP_NUM_THREADS=1 python scripts/bench_verdicts.py [--out benchmarks/results/verdicts.md]

The cases are written here for this check (general knowledge, stated in their passages);
nothing is fitted on them.
"""
from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (question, passage, supported answer, contradicted answer)
CASES = [
    ("What is the capital of Australia?",
     "Canberra is the capital city of Australia. Founded following the federation of the colonies of Australia as "
     "the seat of government for the new nation, it is the country's largest inland city.",
     "The capital of Australia is Canberra.", "The capital of Australia is Sydney."),
    ("When did the Berlin Wall fall?",
     "The Berlin Wall was a guarded concrete barrier that encircled West Berlin from 1961 to 1989. The wall fell on "
     "9 November 1989, when the East German government announced that citizens could cross the border.",
     "The Berlin Wall fell in 1989.", "The Berlin Wall fell in 1975."),
    ("Who wrote Pride and Prejudice?",
     "Pride and Prejudice is an 1813 novel of manners by the English author Jane Austen. It follows the character "
     "development of Elizabeth Bennet.",
     "Pride and Prejudice was written by Jane Austen.", "Pride and Prejudice was written by Charles Dickens."),
    ("How tall is Mount Everest?",
     "Mount Everest is Earth's highest mountain above sea level, located in the Himalayas. Its elevation of "
     "8,849 metres was most recently established in 2020 by Chinese and Nepali authorities.",
     "Mount Everest is 8,849 metres tall.", "Mount Everest is 3,200 metres tall."),
    ("What is the Statue of Liberty made of?",
     "The Statue of Liberty is a colossal neoclassical sculpture on Liberty Island in New York Harbor. The copper "
     "statue, a gift from the people of France, was designed by Frederic Auguste Bartholdi.",
     "The Statue of Liberty is made of copper.", "The Statue of Liberty is made of marble."),
    ("Is the Great Wall of China visible from the Moon with the naked eye?",
     "The Great Wall of China is a series of fortifications in northern China. Contrary to a popular myth, the wall "
     "is not visible from the Moon with the naked eye.",
     "The Great Wall of China is not visible from the Moon with the naked eye.",
     "The Great Wall of China is visible from the Moon with the naked eye."),
    ("Where is the Colosseum?",
     "The Colosseum is an elliptical amphitheatre in the centre of the city of Rome, Italy. Construction began "
     "under the emperor Vespasian in AD 72.",
     "The Colosseum is in Rome, Italy.", "The Colosseum is in Athens, Greece."),
    ("Who painted the Mona Lisa?",
     "The Mona Lisa is a half-length portrait painting by the Italian artist Leonardo da Vinci. It has been "
     "described as the best known work of art in the world.",
     "The Mona Lisa was painted by Leonardo da Vinci.", "The Mona Lisa was painted by Vincent van Gogh."),
]


def _p(c) -> float:
    """The P(true) the verdict reads: calibrated when a calibrator ran, else the raw mix."""
    return c.p_true_calibrated if c.p_true_calibrated is not None else c.p_true_raw


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verdicts.md"))
    ap.add_argument("--verifier", default=None, help="A verifier directory (default: the shipped one).")
    ap.add_argument("--calibrator", default=None, help="A calibrator file (default: the shipped one).")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    import franq

    config: dict = {}
    if args.verifier:
        config["faithfulness"] = {"verifier": {"model": args.verifier}}
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
    right = sum((_p(c) >= 0.5) == (want == "true") for _, _, want, c in rows)
    lines = [f"Stack: {res.model}, faithfulness {res.faithfulness}, calibration {res.calibration}.", "",
             "| set | claim | truth | P(true) | P_s | P_c | P_n | verdict right |", "|---|---|---|---|---|---|---|---|"]
    for where, text, want, c in rows:
        ok = (_p(c) >= 0.5) == (want == "true")
        lines.append(f"| {where} | {text} | {want} | {_p(c):.3f} | {c.p_supported:.3f} | {c.p_contradicted:.3f} | "
                     f"{c.p_not_mentioned:.3f} | {'yes' if ok else '**no**'} |")
    for name, sel in (("true claims", "true"), ("false claims", "false")):
        sub = [c for _, _, w, c in rows if w == sel]
        good = sum((_p(c) >= 0.5) == (sel == "true") for c in sub)
        lines.append(f"\n{name}: {good} of {len(sub)} on the right side of 0.5.")
    lines.append(f"\nAll: {right} of {len(rows)} verdicts right.")
    table = "\n".join(lines)
    print(table)
    cmd = "OMP_NUM_THREADS=1 python scripts/bench_verdicts.py" + "".join(
        f" --{k} {v}" for k, v in (("verifier", args.verifier), ("calibrator", args.calibrator)) if v)
    Path(args.out).write_text(f"# Verdicts of the default stack on obvious cases (issue 25)\n\n`{cmd}`\n\n{table}\n",
                              encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
