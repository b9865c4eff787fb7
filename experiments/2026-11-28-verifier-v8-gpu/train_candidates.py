"""Train the v8 candidates on a GPU from pairs built on the CPU, evaluate them and v7 on
the held-out sets there, choose by the dev sets the training held apart (never the
held-out or user-style sets), and return the chosen weights in parts of at most 15 MB.

    python3 train_candidates.py --pairs PAIRS.json.xz --work /tmp/v8 --out $OUT

Run by the device tool (one H100/H200); see README.md beside this for the call.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

CANDIDATES = {"a": {"lr": 2e-5, "epochs": 2.0}, "b": {"lr": 4e-5, "epochs": 3.0}}


def dev_score(card: dict) -> float:
    """The choice rule, fixed before the run: the mean over the dev sources of the
    supported-vs-not BAcc, plus the mean three-way BAcc where a source has three labels."""
    m = card["dev_metrics"]
    three = [v["bacc3"] for v in m.values() if "bacc3" in v]
    return sum(v["bacc"] for v in m.values()) / len(m) + (sum(three) / len(three) if three else 0.0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=None)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stdout)
    from franq.fit.verifier.train import fit_verifier

    sys.path.insert(0, str(Path("benchmarks").resolve()))
    import bench_verifier_heldout as bench
    import numpy as np

    import franq.fit.verifier.eval as ev
    import lzma
    sets = json.loads(lzma.open("../heldout.json.xz", "rt").read())  # built on the CPU (spaCy is not on the GPU machine)
    cut = 4 if args.smoke else None
    ev.long_evidence_sets = lambda d: {k: ([tuple(i) for i in v["items"]][:cut], np.array(v["y"])[:cut])
                                       for k, v in sets.items()}
    import hashlib
    import re

    import franq.verifier.windows  # noqa: F401
    vw = sys.modules["franq.verifier.windows"]  # (the package exports a function of the same name)
    spans = json.loads(lzma.open("../spans.json.xz", "rt").read())  # spaCy's sentence spans, computed on the CPU
    missed = []

    def cached(text, start=0, end=None):
        key = hashlib.md5(text.encode()).hexdigest()
        if start == 0 and end is None and key in spans:
            return [tuple(x) for x in spans[key]]
        missed.append(key)
        return [(m.start(), m.end()) for m in re.finditer(r"[^.!?]+(?:[.!?]+|$)", text[start:end]) if m.group().strip()]

    vw.split_sentences = cached

    work, out = Path(args.work), Path(args.out)
    report = {"candidates": {}, "heldout": {}}
    t0 = time.time()
    report["heldout"]["v7"] = bench.evaluate("franq/data/verifier", args.device)
    print(json.dumps(report["heldout"]["v7"]), flush=True)
    for name, spec in CANDIDATES.items():
        if args.only and name not in args.only:
            continue
        card = fit_verifier(raw=Path("raw-not-needed"), datasets=Path("datasets"),
                            manifest_path=Path("datasets/verifier/manifest-v8.json"), out=work / name, seed=0,
                            epochs=0.002 if args.smoke else spec["epochs"], batch_size=32, lr=spec["lr"], warmup=0.06,
                            name="franq-verifier-minilm-v8", base="franq/data/verifier", device=args.device,
                            pairs_file=Path(args.pairs), checkpoint_every=0, scaling=True)
        report["candidates"][name] = {"spec": spec, "dev_score": round(dev_score(card), 4),
                                      "dev_metrics": card["dev_metrics"], "calibration": card["calibration"],
                                      "training": card["training"]}
        report["heldout"][name] = bench.evaluate(str(work / name), args.device)
        print(name, json.dumps(report["candidates"][name]["dev_score"]), json.dumps(report["heldout"][name]),
              flush=True)
        best = max(report["candidates"], key=lambda k: report["candidates"][k]["dev_score"])
        report["chosen"], report["seconds"] = best, round(time.time() - t0)
        (out / "report.json").write_text(json.dumps(report, indent=1))
        if best == name:  # written as soon as it leads: a run cut short still returns the best so far
            for f in ("card.json", "CARD.md"):
                (out / f).write_bytes((work / best / f).read_bytes())
            blob = (work / best / "model.safetensors").read_bytes()
            part = 15 * 1024 * 1024
            for i in range(0, len(blob), part):
                (out / f"model.safetensors.part{i // part}").write_bytes(blob[i:i + part])
    print("chosen", report.get("chosen"), "in", round(time.time() - t0), "s; sentence spans not cached:", len(missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
