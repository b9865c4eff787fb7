"""How often each verdict is given on natural dev sets, and how accurate it is (issue 45.2):
the shipped three-condition calibrators and the verifier on answers no fit has seen, the
verdicts made by franq.verdicts (the rule the pipeline uses) at a threshold, for several
``uncertain`` margins. Prints a table and writes it, with the command, to
benchmarks/results/verdict-mix.md.

    OMP_NUM_THREADS=1 python benchmarks/bench_verdict_mix.py [--threshold 0.5] [--margins 0,0.05,0.1]
        [--long-calibrator FILE] [--short-calibrator FILE] [--verifier DIR]

Sets: every natural dev set of benchmarks/bench_calibration_natural.py (franq.fit.natural,
per-claim raw values from its cache of the verifier's pass; no causal-LM pass: the committed
generations hold the embedded model's values):

ExpertQA rand_test   the 205 held-out answers (human-checked claims of GPT-4 / Bing answers),
                     claims as scored (927 of 1104 carry an [n] citation marker)
WiCE held out        Wikipedia sentences against the page they cite (pages up to 8,000
                     characters); WiCE labels support, not truth: "true" here = supported by
                     the page, so read its accuracies against support
nq-open test         the embedded model's greedy answers to 500 test questions, with the gold
                     passage in the list (clean) and with it replaced (corrupted);
                     correct = matches a gold answer

Per set and margin: how many claims get each verdict; the accuracy of likely_true (share
true) and likely_false (share false), and of both together; the all-true baseline on the
same claims (their share of true ones) and the gain over it; the share of true claims among
the uncertain ones; and, for comparison, the accuracy on all claims with the rule off
(every claim likely_true / likely_false by the threshold).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "franq" / "data"
LONG_CAL = DATA / "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
SHORT_CAL = DATA / "calibrator-short-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
FIELDS = ("p_faithful", "p_contradicted", "p_not_mentioned", "uq_faith", "uq_unfaith")


SETS = {"expertqa-test": "ExpertQA rand_test", "wice-heldout": "WiCE held out (label: supported by the page)"}


def natural_rows(verifier=None) -> tuple[list[dict], str]:
    """Per claim of each natural dev set: its set, raw values and label (franq.fit.natural);
    and the verifier stack that read them."""
    from franq.fit import natural as nat
    from franq.fit.generations import datasets_dir

    sets = nat.natural_sets(datasets_dir(), verifier, echo=lambda m: print(m, file=sys.stderr))
    named = [(SETS[k], sets[k]) for k in SETS if k in sets]
    nq = sets["nq-test"]
    named += [(f"nq-open test ({v})", nat.subset(nq, [x == v for x in nq["variant"]])) for v in ("clean", "corrupted")]
    return [{"set": name, **{f: float(s[f][i]) for f in FIELDS}, "is_true": bool(s["is_true"][i])}
            for name, s in named for i in range(len(s["is_true"]))], sets["verifier"]


def scored_claims(rows: list[dict], path: Path) -> list:
    """The rows as calibrated ClaimScores (verdicts not yet made), as the pipeline builds them."""
    from calibration.contract import ClaimInputs
    from claims.types import Claim
    from franq.calibrate import load_calibrator
    from franq.stages.result import knowledge_term
    from franq.types import ClaimScore

    cal = load_calibrator(path)
    v = {f: np.array([r[f] for r in rows], dtype=float) for f in FIELDS}
    parts = cal.predict_components(ClaimInputs(v["p_faithful"], v["uq_faith"], v["uq_unfaith"],
                                               p_contradicted=v["p_contradicted"], p_not_mentioned=v["p_not_mentioned"]))
    return [ClaimScore(Claim("", ()), "scored", **{f: r[f] for f in FIELDS}, p_true_calibrated=float(parts.p_true[k]),
                       p_true_raw=0.0, knowledge=knowledge_term(parts, k)) for k, r in enumerate(rows)]


def _pct(num: int, den: int) -> str:
    return "–" if den == 0 else f"{num / den:.1%}"


def table(rows: list[dict], claims: list, threshold: float, margins: list[float]) -> list[str]:
    from franq.verdicts import claim_verdict

    y = np.array([r["is_true"] for r in rows], dtype=bool)
    out = [("| margin | claims (true) | likely_true | likely_false | uncertain | acc. likely_true | "
            "acc. likely_false | acc. both | all-true baseline on them | gain | true among uncertain |"),
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for margin in [None, *margins]:
        m = -1.0 if margin is None else margin  # a negative margin and no interval test: the rule off
        verdicts = np.array([claim_verdict(c, threshold, margin=m)[0] if margin is not None
                             else ("likely_true" if c.p_true_calibrated >= threshold else "likely_false")
                             for c in claims])
        lt, lf, un = (verdicts == "likely_true"), (verdicts == "likely_false"), (verdicts == "uncertain")
        given = lt | lf
        right = int((lt & y).sum() + (lf & ~y).sum())
        gain = "–" if not given.any() else f"{(right - int((given & y).sum())) / int(given.sum()) * 100:+.1f} pts"
        out.append(f"| {'rule off' if margin is None else f'{margin:g}'} | {len(y)} ({int(y.sum())}) | {int(lt.sum())} | "
                   f"{int(lf.sum())} | {int(un.sum())} | {_pct(int((lt & y).sum()), int(lt.sum()))} | "
                   f"{_pct(int((lf & ~y).sum()), int(lf.sum()))} | {_pct(right, int(given.sum()))} | "
                   f"{_pct(int((given & y).sum()), int(given.sum()))} | {gain} | {_pct(int((un & y).sum()), int(un.sum()))} |")
    return out


def knowledge_line(rows: list[dict], claims: list) -> str:
    """How the not-mentioned claims' knowledge term ranks them (AUROC), and how many there are."""
    from franq.evaluation.common import auroc
    from franq.verdicts import evidence

    nm = [k for k, c in enumerate(claims) if evidence(c)[0] == "not_mentioned"]
    y = np.array([rows[k]["is_true"] for k in nm], dtype=int)
    if not nm or y.min() == y.max():
        return f"Not mentioned (P_n largest): {len(nm)} claims; one class only, no AUROC."
    t = np.array([claims[k].knowledge.p_true for k in nm])
    k = claims[nm[0]].knowledge
    check = "" if k.check_auroc is None else (
        f"; its fit-time ranking check (calibration.knowledge_check, on the calibrator's natural claims) "
        f"{k.check_auroc:.3f} [{k.check_low:.3f}, {k.check_high:.3f}]")
    return (f"Not mentioned (P_n largest): {len(nm)} claims ({int(y.sum())} true); AUROC of their knowledge term "
            f"(calibrated P(true | not mentioned)) {auroc(t, y):.3f}; its map's base rate {k.base_rate:.3f}{check}.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verdict-mix.md"))
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--margins", default="0,0.05,0.1")
    ap.add_argument("--long-calibrator", default=str(LONG_CAL))
    ap.add_argument("--short-calibrator", default=str(SHORT_CAL))
    ap.add_argument("--verifier", default=None, help="A verifier directory (default: the shipped one; its pass is "
                    "cached by franq.fit.natural).")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    rows, stack = natural_rows(args.verifier)
    margins = [float(m) for m in args.margins.split(",")]
    lines = ["# Verdicts on natural dev sets: how often each is given, and how accurate (issue 45.2)", "",
             "    " + " ".join(["python benchmarks/bench_verdict_mix.py", *sys.argv[1:]]), "",
             f"Faithfulness: `{stack}`.", "",
             (f"Threshold {args.threshold:g}; verdicts by `franq.verdicts.claim_verdict` (the pipeline's rule). "
              "`rule off`: every claim likely_true / likely_false by the threshold, as before the `uncertain` "
              "verdict. Accuracy: share of likely_true claims that are true, of likely_false ones that are false; "
              "the all-true baseline is the share of true claims among those given a likely_* verdict; gain = "
              "accuracy of both - that baseline. Target (issue 45): gain >= +10 points where given."), ""]
    for name in dict.fromkeys(r["set"] for r in rows):
        sub = [r for r in rows if r["set"] == name]
        path = Path(args.long_calibrator if not name.startswith("nq-open") else args.short_calibrator)
        claims = scored_claims(sub, path)
        lines += [f"## {name}", "", f"Calibrator: {path.name}.", "", *table(sub, claims, args.threshold, margins), "",
                  knowledge_line(sub, claims), ""]
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
