"""The fast preset (``franq score --fast``) beside the default long form (issue 46.3): time on
the same ExpertQA held-out answers, one torch thread, the two interleaved answer by answer in
one process; and the calibration of the fast P(true) (the shipped fast calibrators) on the
natural dev sets, read from ``--fast``'s own output: ExpertQA held out (rand_test answers no
fit has seen; truth label), nq-open test questions 1-500 (the embedded model's attempted answers; normalized match), WiCE
held out (support label). Prints the tables and writes them, with the command, to
benchmarks/results/fast.md.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_fast.py [--n 20] [--out FILE]

Both stacks split the answers themselves (no given claims) and apply their shipped
calibrators; ExpertQA's ``[n]`` citation markers are stripped from the answers for both.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

import franq
from franq.evaluation.data import expertqa_held_out
from franq.fit import shipped_fast as fast

ROOT = Path(__file__).resolve().parents[1]


def timing(n: int) -> tuple[list[str], dict]:
    """Seconds per answer of each stack, interleaved; the table lines and the raw numbers."""
    records = expertqa_held_out(ROOT / "datasets")[:n]
    examples = [franq.Example.from_dict({"question": r["question"], "passages": r["passages"],
                                         "answer": fast._uncited(r["answer"])}) for r in records]
    limits = {"limits": {"passage_chars": fast.PASSAGE_CHARS}}  # ExpertQA's web pages, read whole
    long_fr = franq.Franq.from_config(franq.FranqConfig.from_dict(limits))
    fast_fr = franq.Franq.from_config(franq.FranqConfig.from_dict({"mode": "fast", **limits}))
    stacks = {"default long form": long_fr, "--fast": fast_fr}
    for fr in stacks.values():  # warm up: models loaded, first-call costs paid
        fr.score_many(examples[:1])
    seconds = {k: [] for k in stacks}
    claims = {k: 0 for k in stacks}
    for ex in examples:
        for name, fr in stacks.items():
            t = time.perf_counter()
            [res] = fr.score_many([ex])
            seconds[name].append(time.perf_counter() - t)
            claims[name] += len(res.scored)
    ratio = np.array(seconds["default long form"]) / np.array(seconds["--fast"])
    total = sum(seconds["default long form"]) / sum(seconds["--fast"])
    lines = [(f"{len(examples)} ExpertQA held-out answers (the first {n} of rand_test less the answers in train; "
              f"citation markers stripped), split by each stack; one torch thread, interleaved answer by answer on "
              f"{platform.node()} (a 2-core machine shared with other jobs)."), "",
             "| stack | components | scored claims | total s | s per answer (median) |", "|---|---|---|---|---|"]
    for name, fr in stacks.items():
        mode = fr.config.mode
        c = fr.components[mode]
        what = (f"{c['faithfulness']}; UQ {c['uq_faith']} / {c['uq_unfaith']}; {c['calibrator']}")
        lines.append(f"| {name} | {what} | {claims[name]} | {sum(seconds[name]):.1f} | "
                     f"{np.median(seconds[name]):.2f} |")
    lines += ["", (f"Speed-up of --fast: total {total:.1f}x, median per answer {np.median(ratio):.1f}x "
                   f"(range {ratio.min():.1f}x-{ratio.max():.1f}x; target >= 10x).")]
    return lines, {"seconds": seconds, "claims": claims}


def calibration() -> list[str]:
    fr = fast.calibrated_franq()
    t = time.perf_counter()
    parts = fast.set_arrays(ROOT / "datasets", fast.DEV, fr)
    model, gold = parts["nq-open-test"], parts["nq-open-test-gold"]  # the same questions, both answerers
    parts["nq-open-test, model and gold answers"] = {k: np.concatenate([model[k], gold[k]]) for k in model}
    table = fast.dev_table(parts)
    files = ", ".join(f"`franq/data/{n}`" for n in fast.NAMES.values())
    return [(f"The shipped {files} (split claims; short answers read whole) through `--fast` itself on the natural "
             f"dev sets (never fitted on); the fast stack {fr.preset('fast').stack['faithfulness']} (verifier pass "
             f"{time.perf_counter() - t:.0f} s). ECE: 10 equal-width bins; Brier of the base rate: a constant at "
             "the set's share true."), "", table, "", *prior_rows(parts)]


def prior_rows(parts: dict) -> list[str]:
    """Each dev set as a deployment of its own: the preset's shipped calibrator moved to the base
    rate EM estimates from the set's unlabelled claims (what `franq fit prior --from-records`
    does with `--fast` output), ECE / Brier / AUROC before and after. Labels only score."""
    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator
    from calibration.metrics import brier_score, ece_floor, expected_calibration_error
    from franq.evaluation.common import auroc
    from franq.fit.prior import EM_BOUND_NOTE, estimate_prior

    lines = ["### Moved to each set's base rate, estimated from its unlabelled claims", "",
             ("`franq fit prior CALIBRATOR --from-records FAST.jsonl` on each set's own `--fast` output (EM, Saerens "
              "et al. 2002; no label read), per preset: a deployment is one kind of answer. ECE floor: what a "
              "calibrated P(true) with the moved values shows on that many claims (calibration.metrics.ece_floor)."),
             "", ("| dev set | preset | claims | share true | fitted share | EM estimate | ECE before -> after | "
                  "ECE floor | Brier before -> after | Brier of the base rate | AUROC | ECE with the true share "
                  "given (--prior) |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, a in parts.items():
        for preset in sorted(set(a["preset"])):
            keep = a["preset"] == preset
            p, q, y = (np.asarray(a[k][keep], dtype=float) for k in ("p", "q", "y"))
            cal = FranqCalibrator.from_json(ROOT / "franq" / "data" / fast.NAMES[preset])
            X = ClaimInputs(p, np.ones(len(p)), np.zeros(len(p)))
            assert np.allclose(cal.predict(X), q), "the pipeline's P(true) is the calibrator's"
            cal.prior = float(np.clip(y.mean(), 1e-4, 1 - 1e-4))  # a user who knows the share: --prior
            oracle = expected_calibration_error(cal.predict(X), y)
            cal.prior, _ = estimate_prior(cal, X)
            moved = cal.predict(X)
            floor = ece_floor(moved, n_sim=300)
            lines.append(f"| {name} | {preset} | {len(y)} | {y.mean():.3f} | {cal.base_rate:.3f} | {cal.prior:.3f} | "
                         f"{expected_calibration_error(q, y):.3f} -> {expected_calibration_error(moved, y):.3f} | "
                         f"{floor[0]:.3f} ({floor[1]:.3f}) | {brier_score(q, y):.3f} -> {brier_score(moved, y):.3f} | "
                         f"{y.var():.3f} | {auroc(moved, y) if 0 < y.mean() < 1 else float('nan'):.3f} | "
                         f"{oracle:.3f} |")
    return [*lines, "", EM_BOUND_NOTE]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20, help="ExpertQA held-out answers timed")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "fast.md"))
    ap.add_argument("--calibration-only", action="store_true",
                    help="rerun the calibration part only; OUT's time section (the costly long-form side) is kept")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    command = f"`OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_fast.py {' '.join(sys.argv[1:])}`"
    command = command.replace(" `", "`")
    cal = calibration()
    print("\n".join(cal), flush=True)
    if args.calibration_only:
        old = Path(args.out).read_text(encoding="utf-8")
        commands = old.split("\n\n## Time", 1)[0].split("\n\n", 1)[1].splitlines()
        timed = old.split("## Time\n\n", 1)[1].split("\n\n## Calibration", 1)[0].splitlines()
        commands = [line for line in commands if "calibration-only" not in line]
        commands.append(f"Calibration section: {command}")
    else:
        timed, _ = timing(args.n)
        commands = [f"Command: {command}"]
    lines = ["# The fast preset beside the default long form (issue 46.3)", "", *commands, "", "## Time", "", *timed,
             "", "## Calibration of the fast P(true)", "", *cal, ""]
    print("\n".join(timed))
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
