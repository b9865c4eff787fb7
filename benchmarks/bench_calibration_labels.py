"""How many labelled claims a calibrator needs (issue 45 item 3): the learning curve of
`franq fit calibrator`'s default fit (three-condition, soft variant: each claim in the
three maps weighted by the verifier's P_s, P_c, P_n) on natural answers, and the
check of its --target-precision threshold on held-out folds. Prints the tables and writes
them, with the command, to benchmarks/results/calibration-labels.md.

    OMP_NUM_THREADS=1 python benchmarks/bench_calibration_labels.py [--verifier DIR] [--repeats 20]

For each size n: draw whole answers at random until n labelled claims (20 draws), fit, and
measure ECE (a) out of fold, by the command's 5-fold cross-validation by answer, and (b) on
every claim of the source not drawn (the truly held-out number). Sources (franq.fit.natural):
ExpertQA natural answers (the train sample and rand_test, pooled; 94% true) and the embedded
model's nq-open answers (train and test pooled; 10% true). The smallest condition's
(weighted) claim count is reported beside n: the number `franq fit calibrator` warns by
(franq.fit.calibrator_cv.LABELS_NEEDED).

With ``--fast``: the same for the fit `franq fit calibrator` makes on `franq score --fast`
output (an isotonic map of P_supported to P(true)), on ExpertQA's split claims and on
nq-open's short answers (the embedded model's and the gold ones), written to
benchmarks/results/calibration-labels-fast.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SIZES = (50, 100, 200, 400, 800)


def draw(data, n: int, rng) -> np.ndarray:
    """A mask of whole answers, drawn at random until at least ``n`` claims."""
    order = rng.permutation(np.unique(data.groups))
    counts = np.bincount(data.groups)
    take = order[: int(np.searchsorted(np.cumsum(counts[order]), n)) + 1]
    return np.isin(data.groups, take)


def curve(data, fit, sizes, repeats: int, targets) -> tuple[list[str], list[str]]:
    from calibration.metrics import expected_calibration_error
    from franq.errors import InputError
    from franq.fit.calibrator_cv import choose_threshold, fold_of, out_of_fold

    rows, trows = [], []
    for n in sizes:
        if n > 0.8 * len(data):
            continue
        rng = np.random.default_rng(n)
        oof, held, smallest, failed = [], [], [], 0
        gaps = {t: [] for t in targets}
        for _ in range(repeats):
            mask = draw(data, n, rng)
            part, rest = data.subset(mask), data.subset(~mask)
            try:
                cal = fit(part)
                folds = fold_of(part.groups, 5, seed=0)
                p, _ = out_of_fold(part, fit, folds)
            except (ValueError, InputError):
                failed += 1
                continue
            oof.append(expected_calibration_error(p, part.is_true))
            held.append(expected_calibration_error(cal.predict(rest.inputs()), rest.is_true))
            smallest.append(min(v["weight"] for k, v in cal.counts_.items()  # the three conditions, or a binary
                                if k in ("supported", "contradicted", "not_mentioned", "faithful", "unfaithful")))
            for t in targets:
                try:
                    ch = choose_threshold(p, part.is_true, folds, target_precision=t)
                except InputError:
                    continue
                if ch["held_out_mean"] is not None:
                    gaps[t].append(ch["held_out_mean"] - t)
        if not held:
            rows.append(f"| {n} | - | - | - | - | {failed} of {repeats} |")
            continue
        rows.append(f"| {n} | {np.median(smallest):.0f} | {np.median(oof):.3f} ({np.percentile(oof, 90):.3f}) | "
                    f"{np.median(held):.3f} ({np.percentile(held, 90):.3f}) | {np.mean(np.array(held) <= 0.05):.0%} | "
                    f"{failed} of {repeats} |")
        for t in targets:
            g = np.array(gaps[t])
            trows.append(f"| {n} | {t:g} | {len(g)} of {repeats} | " + (
                f"{np.mean(g):+.3f} | {np.mean(np.abs(g) <= 0.05):.0%} |" if len(g) else "- | - |"))
    return rows, trows


def fast_sources() -> dict:
    """The natural sources as ``franq score --fast`` scores them (the shipped verifier, no
    calibrator), as the TrainingClaims `franq fit calibrator` reads from that output: per
    preset, ExpertQA's split claims (train + held out) and nq-open's short answers (the
    embedded model's and the gold ones, train + test questions)."""
    from franq.fit import shipped_fast as sf
    from franq.fit.training_claims import TrainingClaims

    fr = sf.fast_franq()
    out = {}
    for name, sets, preset, targets in (
            ("--fast, ExpertQA split claims (train + held out)", ("expertqa-train", "expertqa-heldout"), "fast",
             (0.1, 0.2)),
            ("--fast, nq-open short answers, the model's and the gold ones (train + test)",
             ("nq-open-train", "nq-open-train-gold", "nq-open-test", "nq-open-test-gold"), "fast_short", (0.5, 0.6))):
        mine = [{k: v[a["preset"] == preset] for k, v in a.items()}  # scored as --fast scores them
                for a in sf.set_arrays(ROOT / "datasets", sets, fr).values()]
        y = np.concatenate([a["y"] for a in mine])
        answers = np.concatenate([a["answer"] + 1e6 * j for j, a in enumerate(mine)])  # one group per answer
        n = len(y)
        data = TrainingClaims(np.concatenate([a["p"] for a in mine]), np.ones(n), np.zeros(n), y,
                              tuple(bool(v) for v in y), {}, dict(fr.preset(preset).stack),
                              groups=np.unique(answers, return_inverse=True)[1])
        out[name] = (data, targets)
    return out


def main() -> int:
    from franq.fit import natural as nat
    from franq.fit.calibrator import fit_franq_calibrator, fit_three_condition_calibrator

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verifier", default=None)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--out", default=None, help="default: benchmarks/results/calibration-labels.md "
                                               "(with --fast: calibration-labels-fast.md)")
    ap.add_argument("--cached-only", action="store_true", help="Measure only the sets the cache holds.")
    ap.add_argument("--fast", action="store_true", help="The fit `franq fit calibrator` makes on `--fast` output "
                                                        "(an isotonic map of P_supported) instead.")
    args = ap.parse_args()
    args.out = args.out or str(ROOT / "benchmarks" / "results" / (
        "calibration-labels-fast.md" if args.fast else "calibration-labels.md"))
    t0 = time.perf_counter()
    if args.fast:
        return fast_main(args, t0, fit_franq_calibrator)
    sets = nat.natural_sets(ROOT / "datasets", args.verifier, echo=lambda m: print(m, file=sys.stderr),
                            compute=not args.cached_only)
    sources = {"ExpertQA natural (train sample + rand_test)": (nat.join(sets["expertqa-train"], sets["expertqa-test"]),
                                                               (0.1, 0.2)),
               "nq-open answers (train + test)" if "nq-train" in sets else "nq-open test answers":
               (nat.join(sets["nq-train"], sets["nq-test"]) if "nq-train" in sets else sets["nq-test"], (0.9, 0.95))}
    head = [f"# Labels a calibrator needs (issue 45 item 3); verifier {sets['verifier']}", "",
            f"Command: `OMP_NUM_THREADS=1 python benchmarks/bench_calibration_labels.py --repeats {args.repeats}`. "
            "The fit is `franq fit calibrator`'s default (three-condition, soft variant, "
            "franq.fit.calibrator.fit_three_condition_calibrator); ECE as the median over draws (90th percentile "
            "in brackets); 'held out' = every claim of the source not drawn.", ""]

    def fit(part):
        return fit_three_condition_calibrator(part, variant="soft", min_per_condition=0)[0]

    data = {name: (nat.training_claims_of({**s, "answer": [str(a) for a in s["answer"]]}), targets)
            for name, (s, targets) in sources.items()}
    return report(args, t0, head, data, fit, "smallest condition (weighted claims, median)")


def fast_main(args, t0: float, fit_franq_calibrator) -> int:
    head = ["# Labels a fast-mode calibrator needs (issue 45 item 3, issue 46.3)", "",
            f"Command: `OMP_NUM_THREADS=1 python benchmarks/bench_calibration_labels.py --fast --repeats {args.repeats}`. "
            "The fit is what `franq fit calibrator` makes on `franq score --fast` output: an isotonic map of "
            "P_supported to P(true), fitted on the truth labels (franq.fit.calibrator.fit_franq_calibrator, variant "
            "none with the faithfulness map). ECE as the median over draws (90th percentile in brackets); 'held out' = "
            "every claim of the source not drawn; smallest condition: every claim is in the one map.", ""]

    def fit(part):
        return fit_franq_calibrator(part, variant="none", calibrate_faithfulness=True, min_per_condition=0)[0]

    return report(args, t0, head, fast_sources(), fit, "claims in the map (median)")


def report(args, t0: float, head: list[str], sources: dict, fit, count_column: str) -> int:
    """The learning curve and threshold tables of each source (``name -> (TrainingClaims,
    target precisions)``) under ``head``: printed, and written to ``args.out``."""
    out = list(head)
    for name, (data, targets) in sources.items():
        rows, trows = curve(data, fit, SIZES, args.repeats, targets)
        out += [f"## {name}: {len(data)} claims, {data.is_true.mean():.3f} true", "",
                f"| labelled claims n | {count_column} | ECE out of fold (5-fold, as the command reports) | "
                "ECE held out | draws with held-out ECE <= .05 | fits that failed |",
                "|---|---|---|---|---|---|", *rows, "",
                "--target-precision picked on 4 folds, precision reached on the 5th (mean over folds and draws):", "",
                "| n | target precision | draws with a threshold | held-out precision - target (mean) | "
                "draws within .05 |", "|---|---|---|---|---|", *trows, ""]
    out.append(f"({time.perf_counter() - t0:.0f} s)")
    text = "\n".join(out)
    print(text)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
