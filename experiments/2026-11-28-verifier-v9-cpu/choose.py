"""Read verifier checkpoints on the natural dev sets the training holds apart (ExpertQA dev,
WiCE dev, from the pairs file), the way ``franq score`` reads claims (train.read_dev):

    OMP_NUM_THREADS=1 python experiments/2026-11-28-verifier-v9-cpu/choose.py \
        --pairs $V9/pairs-v9.json.xz --out $V9/choose.json CKPT_OR_DIR ...

A CKPT is a kept ``step-NNNNN.pt`` (loop.train's ``keep``): its weights go, as float16, into a
copy of the shipped verifier folder (same architecture, tokenizer and windowing card). A DIR
is a verifier folder read as it is. The score that chooses: the mean over the two sets of
(supported-vs-not BAcc at 0.5 + AUROC) / 2. ``--write DIR --name NAME CKPT`` only writes
that checkpoint's verifier folder (its card named NAME) for the benchmarks.
"""
from __future__ import annotations

import argparse
import json
import lzma
import shutil
import tempfile
from pathlib import Path

NATURAL = ("expertqa", "wice")
SHIPPED = Path(__file__).resolve().parents[2] / "franq" / "data" / "verifier"


def folder_for(path: Path, tmp: Path, name: str | None = None) -> Path:
    if path.is_dir():
        return path
    import torch
    from safetensors.torch import save_file

    out = tmp / path.stem if name is None else tmp
    shutil.copytree(SHIPPED, out)
    (out / "slot-combiner.json").unlink()  # fitted for v7's outputs
    if name is not None:  # a candidate folder for the benchmarks: its own name in results
        card = json.loads((out / "card.json").read_text())
        (out / "card.json").write_text(json.dumps({**card, "name": name, "checkpoint": str(path)}, indent=1) + "\n")
    state = torch.load(path, map_location="cpu", weights_only=True)["model"]
    save_file({k: v.to(torch.float16).contiguous() for k, v in state.items()}, str(out / "model.safetensors"),
              metadata={"format": "pt"})
    return out


def main() -> None:
    from franq.fit.verifier.train import evaluate, read_dev
    from franq.verifier import Verifier

    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--write", type=Path, help="Only write a candidate verifier folder of the one CKPT here.")
    ap.add_argument("--name", default="franq-verifier-minilm-v9-candidate", help="Its card's name (with --write).")
    ap.add_argument("models", nargs="+", type=Path)
    args = ap.parse_args()
    if args.write:
        folder_for(args.models[0], args.write, args.name)
        return
    with lzma.open(args.pairs, "rt", encoding="utf-8") as f:
        dev = {k: v for k, v in json.load(f)["pairs"]["dev"].items() if k in NATURAL}
    results = json.loads(args.out.read_text()) if args.out.is_file() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.models:
            m = evaluate(dev, read_dev(Verifier(folder_for(path, Path(tmp))), dev))
            m["score"] = round(sum((m[k]["bacc"] + m[k]["auroc"]) / 2 for k in NATURAL) / len(NATURAL), 4)
            results[str(path)] = m
            args.out.write_text(json.dumps(results, indent=1) + "\n")
            print(path, json.dumps(m), flush=True)


if __name__ == "__main__":
    main()
