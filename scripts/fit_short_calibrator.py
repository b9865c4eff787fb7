"""Fit the shipped short-form calibrator for the embedded stack on the nq-open train split.

    python scripts/fit_short_calibrator.py [--variant condition] [--n 300] [--out-dir franq/data]

No model runs: the inputs are the committed generations of the benchmark
(``datasets/generations/short-nq-open.<model>.jsonl.gz``, written by
``scripts/benchmark.py observe short --split train``): for each train question, the greedy
answer and 10 samples with the passages (clean list, and the corrupted list where it
differs). The pipeline's short preset computes P_faithful ("question answer" against the
passages), semantic entropy and the eigenvalue sum from those samples, exactly as
``franq score --mode short`` does; the label is whether the greedy answer matches a gold
answer (normalized match, refusals left out, as in the benchmark). The calibrator is keyed
on the short stack (model, faithfulness, scorers, prompt version, equivalence judge,
number of samples) and picked up by ``franq score --mode short`` when that stack runs.

Note: the benchmark draws the greedy answer and the samples in one batch (greedy first);
``franq score`` draws the samples alone with the same seed. Both are 10 samples at
temperature 1 from the same prompt, so the distribution is the same, not the draws.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchmark import CACHE, NQ, SIZES, read_cache, short_split, slug  # noqa: E402
from calibration.franq import FranqCalibrator  # noqa: E402
from franq.config import FranqConfig  # noqa: E402
from franq.evaluation.data import load_nq_open  # noqa: E402
from franq.evaluation.methods import SHORT  # noqa: E402
from franq.evaluation.observe import short_key  # noqa: E402
from franq.evaluation.units import _NamedModel, short_units  # noqa: E402
from franq.evidence.samples import SamplingOptions  # noqa: E402
from franq.faithfulness.combined import CombinedFaithfulness  # noqa: E402
from franq.lm.load import EMBEDDED_NAME  # noqa: E402
from franq.pipeline import Franq  # noqa: E402


def observed(cache: dict, split: str, n: int, variants=("clean", "corrupted")):
    """``(item, record, variant)`` of the first ``n`` questions of ``split`` with a cached
    observation: the clean passage lists, plus the corrupted lists of the questions whose
    gold passage was replaced (the others share generations); and how many had none."""
    options = SamplingOptions()
    rows, missing = [], 0
    for variant in variants:
        for it in load_nq_open(NQ, split, variant, limit=n):
            if variant == "corrupted" and not it.corrupted:
                continue
            rec = cache.get(short_key(it.id, it.passage_ids, options))
            if rec is None:
                missing += 1
            else:
                rows.append((it, rec, variant))
    return rows, missing


def train_units(cache: dict, model_name: str, faith, n: int):
    """The observed, attempted train answers (:func:`observed`)."""
    rows, missing = observed(cache, "train", n)
    units, skipped = short_units([it for it, _, _ in rows], [r for _, r, _ in rows], model_name=model_name,
                                 faithfulness=faith)
    return units, {"observed": len(rows), "not_observed": missing, **skipped}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", default="condition", choices=["condition", "calibrated", "soft"])
    ap.add_argument("--n", type=int, default=300, help="first N train questions (all 300 are in the committed "
                                                       "generations; the benchmark's tables use the first "
                                                       f"{SIZES['short']['train']})")
    ap.add_argument("--results", default=str(ROOT / "benchmarks" / "results" / "short-calibrator.md"),
                    help="where to write the test-split evaluation table")
    ap.add_argument("--out-dir", default=str(ROOT / "franq" / "data"))
    args = ap.parse_args()
    faith = CombinedFaithfulness(lm_name=EMBEDDED_NAME)
    config = FranqConfig.from_dict({"mode": "short", "calibration": {"calibrator": "none"}})
    stack = Franq(config, _NamedModel(EMBEDDED_NAME), faithfulness=faith).preset("short").stack
    cache = read_cache(CACHE / f"short-nq-open.{slug(EMBEDDED_NAME)}.jsonl")
    units, counts = train_units(cache, EMBEDDED_NAME, faith, args.n)
    cal = FranqCalibrator(variant=args.variant, fitted_for=stack, description=(
        f"default short-form calibrator: fitted by scripts/fit_short_calibrator.py on the nq-open train split "
        f"({len(units)} attempted answers from datasets/generations; labels: normalized match of the greedy answer)"))
    cal.fit(*SHORT.franq_inputs(units), units.is_true)
    out = Path(args.out_dir) / f"calibrator-short-{slug(stack['model'])}-{slug(stack['faithfulness'])}.json"
    cal.to_json(out)
    report = {"fitted_for": stack, "units": counts | {"used": len(units), "true": int(units.is_true.sum())},
              "counts": cal.counts_, "train_ece": cal.train_ece_, "warnings": list(cal.warnings_),
              "train_p_true": cal.fit_spread_,
              "file": str(out.relative_to(ROOT) if out.is_relative_to(ROOT) else out),
              "file_bytes": out.stat().st_size}
    print(json.dumps(report, indent=2))
    table = evaluate(cal, cache, faith)
    print(table)
    command = "python scripts/fit_short_calibrator.py" + "".join(f" {a}" for a in sys.argv[1:])
    Path(args.results).write_text(f"# The shipped short-form calibrator on the nq-open test split\n\nCommand: `{command}`\n\n"
                                  f"Fitted on {len(units)} attempted train answers ({int(units.is_true.sum())} true), "
                                  f"variant {cal.name}; file `{report['file']}`.\n\n{table}\n", encoding="utf-8")


def evaluate(cal, cache: dict, faith) -> str:
    """AUROC, PR-AUC of false answers and ECE on the test split (first 200 questions, the
    benchmark's units), calibrated against the raw mix."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    from calibration.metrics import expected_calibration_error

    rows = ["| test variant | answers | true | AUROC cal. | AUROC raw | PR-AUC false cal. | ECE cal. | ECE raw | "
            "P(true) cal. range |", "|---|---|---|---|---|---|---|---|---|"]
    for variant in ("clean", "corrupted"):
        u, _ = short_split("test", variant, SIZES["short"]["test"], cache, SamplingOptions(), EMBEDDED_NAME, faith)
        p = cal.predict(*SHORT.franq_inputs(u))
        raw, y = SHORT.franq_none(u), u.is_true
        rows.append(f"| {variant} | {len(u)} | {int(y.sum())} | {roc_auc_score(y, p):.3f} | {roc_auc_score(y, raw):.3f} | "
                    f"{average_precision_score(1 - y, 1 - p):.3f} | {expected_calibration_error(p, y):.3f} | "
                    f"{expected_calibration_error(raw, y):.3f} | {p.min():.3f}-{p.max():.3f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
