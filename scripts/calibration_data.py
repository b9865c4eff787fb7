"""Shared by the calibration scripts: the scored ExpertQA splits (franq score output with
the claim labels passed through). Uses a cached file when given / present; otherwise
scores ``datasets/expertqa/{split}.jsonl`` itself with ``franq score --calibrator none``
so results are reproducible from a clean checkout (slow on CPU: about an hour per split)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "benchmarks" / "cache"


def scored_split(split: str, path: str | None = None, *, stack: str = "embedded-lexical",
                 extra_args: tuple[str, ...] = ()) -> Path:
    """Path of the scored ``split`` ('train' or 'test'), scoring it first if needed."""
    out = Path(path) if path else CACHE / f"expertqa-{split}.{stack}.jsonl"
    if out.is_file() and out.stat().st_size:
        return out
    if path:
        raise SystemExit(f"{out}: no such scored file")
    out.parent.mkdir(parents=True, exist_ok=True)
    src = ROOT / "datasets" / "expertqa" / f"{split}.jsonl"
    print(f"scoring {src} -> {out} (this takes a while on CPU)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "franq", "score", str(src), "-o", str(out), "--calibrator", "none",
                    *extra_args], check=True, cwd=ROOT)
    return out
