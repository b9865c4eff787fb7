"""How often each verdict is given on natural dev sets, and how accurate it is (issue 45.2):
the shipped three-condition calibrators and the verifier on answers no fit has seen, the
verdicts made by franq.verdicts (the rule the pipeline uses) at a threshold, for several
``uncertain`` margins. Prints a table and writes it, with the command, to
benchmarks/results/verdict-mix.md.

    OMP_NUM_THREADS=1 python benchmarks/bench_verdict_mix.py [--threshold 0.5] [--margins 0,0.05,0.1]
        [--long-calibrator FILE] [--short-calibrator FILE] [--cache /tmp/verdict-rows.jsonl]

Sets (natural answers, truth labels; no causal-LM pass: the committed generations hold
the embedded model's values, the verifier runs on CPU):

ExpertQA rand_test   the 205 held-out answers (human-checked claims of GPT-4 / Bing answers,
                     franq.evaluation.data.expertqa_held_out), UQ from
                     datasets/generations/long-expertqa.*; claims keep their [n] citation markers
                     (as scored); the verifier reads them as the pipeline would
nq-open test         the embedded model's greedy answers to the first 200 test questions, with
                     the gold passage in the list (clean) and with it replaced (corrupted);
                     correct = matches a gold answer

WiCE held out is not measured: its claims carry support labels only (is_faithful), no truth
labels, so a verdict's accuracy cannot be read there.

Per set and margin: how many claims get each verdict; the accuracy of likely_true (share
true) and likely_false (share false), and of both together; the all-true baseline on the
same claims (their share of true ones) and the gain over it; the share of true claims among
the uncertain ones; and, for comparison, the accuracy on all claims with the rule off
(every claim likely_true / likely_false by the threshold).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "franq" / "data"
LONG_CAL = DATA / "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
SHORT_CAL = DATA / "calibrator-short-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
FIELDS = ("p_faithful", "p_contradicted", "p_not_mentioned", "uq_faith", "uq_unfaith")


def long_rows(datasets: Path, backend) -> list[dict]:
    """Per labelled claim of the held-out ExpertQA answers: its raw values and truth."""
    from franq.evaluation.data import expertqa_held_out
    from franq.fit.calibrator import training_claims
    from franq.fit.shipped_verifier import long_verifier_lines

    t = training_claims(long_verifier_lines(datasets, backend, expertqa_held_out(datasets)))
    return [{"set": "ExpertQA rand_test", **{f: float(getattr(t, f)[i]) for f in FIELDS},
             "is_true": bool(t.is_true[i])} for i in range(len(t.is_true))]


def short_rows(datasets: Path, backend, n: int = 200) -> list[dict]:
    from franq.fit.shipped_verifier import short_verifier_results

    _, rows = short_verifier_results(datasets, backend, n, split="test")
    return [{"set": f"nq-open test ({variant})", **{f: getattr(s.claims[0], f) for f in FIELDS}, "is_true": y}
            for variant, s, y in rows if s.claims and s.claims[0].status == "scored"]


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
    return (f"Not mentioned (P_n largest): {len(nm)} claims ({int(y.sum())} true); AUROC of their knowledge term "
            f"(calibrated P(true | not mentioned)) {auroc(t, y):.3f}; its map's base rate "
            f"{claims[nm[0]].knowledge.base_rate:.3f}.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verdict-mix.md"))
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--margins", default="0,0.05,0.1")
    ap.add_argument("--long-calibrator", default=str(LONG_CAL))
    ap.add_argument("--short-calibrator", default=str(SHORT_CAL))
    ap.add_argument("--cache", default=None, help="Per-claim rows: read when present, else written (skips the verifier).")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from franq.fit.generations import datasets_dir
    from franq.fit.shipped_verifier import verifier_backend

    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.is_file():
        rows = [json.loads(x) for x in cache.read_text(encoding="utf-8").splitlines() if x.strip()]
    else:
        datasets, backend = datasets_dir(), verifier_backend()
        rows = long_rows(datasets, backend) + short_rows(datasets, backend)
        if cache is not None:
            cache.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    margins = [float(m) for m in args.margins.split(",")]
    lines = ["# Verdicts on natural dev sets: how often each is given, and how accurate (issue 45.2)", "",
             "    " + " ".join(["python benchmarks/bench_verdict_mix.py", *sys.argv[1:]]), "",
             (f"Threshold {args.threshold:g}; verdicts by `franq.verdicts.claim_verdict` (the pipeline's rule). "
              "`rule off`: every claim likely_true / likely_false by the threshold, as before the `uncertain` "
              "verdict. Accuracy: share of likely_true claims that are true, of likely_false ones that are false; "
              "the all-true baseline is the share of true claims among those given a likely_* verdict; gain = "
              "accuracy of both - that baseline. Target (issue 45): gain >= +10 points where given."), ""]
    for name in dict.fromkeys(r["set"] for r in rows):
        sub = [r for r in rows if r["set"] == name]
        path = Path(args.long_calibrator if name.startswith("ExpertQA") else args.short_calibrator)
        claims = scored_claims(sub, path)
        lines += [f"## {name}", "", f"Calibrator: {path.name}.", "", *table(sub, claims, args.threshold, margins), "",
                  knowledge_line(sub, claims), ""]
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
