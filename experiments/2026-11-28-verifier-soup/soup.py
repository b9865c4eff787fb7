"""Weight-space interpolation (WiSE-FT, Wortsman et al. 2022) between the shipped verifier v7
and a v9 checkpoint (v7 trained on further, so both sit in one basin: their weights differ
by 0.4% in L2):

    python experiments/2026-11-28-verifier-soup/soup.py --alpha 0.5 V9_CKPT_OR_DIR OUT.pt

OUT.pt holds ``{"model": (1 - alpha) * v7 + alpha * v9}`` in float32, the layout of a kept
checkpoint, so ../2026-11-28-verifier-v9-cpu/choose.py reads and writes it as it reads v9's.
A V9 DIR is a verifier folder (its model.safetensors); a CKPT a kept ``step-NNNNN.pt``.
"""
from __future__ import annotations

import argparse
from pathlib import Path

SHIPPED = Path(__file__).resolve().parents[2] / "franq" / "data" / "verifier"


def weights(path: Path) -> dict:
    import torch
    from safetensors.torch import load_file

    if path.is_dir():
        return {k: v.float() for k, v in load_file(str(path / "model.safetensors")).items()}
    return {k: v.float() for k, v in torch.load(path, map_location="cpu", weights_only=True)["model"].items()}


def main() -> None:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--alpha", type=float, required=True, help="Weight of the v9 checkpoint (0: v7, 1: v9).")
    ap.add_argument("v9", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    v7, v9 = weights(SHIPPED), weights(args.v9)
    if set(v7) != set(v9):
        raise SystemExit(f"soup: {args.v9} does not hold v7's tensors ({sorted(set(v7) ^ set(v9))[:3]} ...)")
    soup = {k: (1 - args.alpha) * v7[k] + args.alpha * v9[k] for k in v7}
    torch.save({"model": soup, "alpha": args.alpha, "v9": str(args.v9)}, args.out)


if __name__ == "__main__":
    main()
