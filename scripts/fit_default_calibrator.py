"""Fit the shipped default calibrator on the scored ExpertQA training split.

    python scripts/fit_default_calibrator.py [--train-scored FILE] [--variant condition]

Reads ``franq score`` output of ``datasets/expertqa/train.jsonl`` (scoring it first with
the default stack when no file is given or cached), fits the FRANQ calibrator and writes
``franq/data/calibrator-<mode>-<model>-<faithfulness>.json``, keyed on the stack it was
scored with (model id, faithfulness backend, scorers, prompt version, mode). ``franq
score`` picks it up automatically when the running stack matches. Rerun it after
changing the default model, faithfulness backend or prompt.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from calibration_data import ROOT, scored_split

sys.path.insert(0, str(ROOT))

from franq.fit.calibrator import fit_franq_calibrator, read_scored, training_claims  # noqa: E402


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--train-scored", help="franq score output of datasets/expertqa/train.jsonl")
    ap.add_argument("--variant", default="condition", choices=["condition", "calibrated", "soft", "none"])
    ap.add_argument("--out-dir", default=str(ROOT / "franq" / "data"))
    args = ap.parse_args()
    path = scored_split("train", args.train_scored)
    data = training_claims(read_scored(path))
    cal, report = fit_franq_calibrator(data, variant=args.variant, description=(
        f"default: fitted by scripts/fit_default_calibrator.py on {path.name} ({len(data)} labelled claims)"))
    s = data.stack
    out = Path(args.out_dir) / f"calibrator-{s['mode']}-{slug(s['model'])}-{slug(s['faithfulness'])}.json"
    cal.to_json(out)
    report["file_bytes"] = out.stat().st_size
    report["trained_on"] = str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    print(json.dumps(report, indent=2))
    print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
