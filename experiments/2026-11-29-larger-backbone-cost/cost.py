"""Per-pair cost of the verifier's backbone against the embedded SmolLM2-135M as a sequence
classifier (all 30 layers, and its first 4 and 8), one CPU thread, float32, batches of 32
pairs padded to the verifier's 160 tokens. See README.md beside this file.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-larger-backbone-cost/cost.py
"""
import time

import torch
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

from franq.lm.load import dequantized_cache, embedded_gguf_path
from franq.verifier import shipped_verifier_dir

PREMISE = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named "
           "after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 to 1889 as the "
           "centrepiece of the 1889 World's Fair. ") * 2
PAIRS = [(PREMISE, "The tower was built from 1887 to 1889.")] * 32


def per_pair(directory: str, layers: int | None = None) -> tuple[float, float]:
    """(seconds per pair, best of three batches; millions of parameters)."""
    tok = AutoTokenizer.from_pretrained(directory)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    config = AutoConfig.from_pretrained(directory, num_labels=3)
    config.pad_token_id = tok.pad_token_id
    if layers:
        config.num_hidden_layers = layers
    model = AutoModelForSequenceClassification.from_pretrained(directory, config=config, dtype=torch.float32).eval()
    enc = tok([p for p, _ in PAIRS], [c for _, c in PAIRS], truncation=True, max_length=160, padding="max_length",
              return_tensors="pt")
    with torch.inference_mode():
        model(**{k: v[:4] for k, v in enc.items()})
        times = []
        for _ in range(3):
            t = time.perf_counter()
            model(**enc)
            times.append(time.perf_counter() - t)
    return min(times) / len(PAIRS), sum(p.numel() for p in model.parameters()) / 1e6


if __name__ == "__main__":
    torch.set_num_threads(1)
    smol = str(dequantized_cache(embedded_gguf_path()))
    rows = [("v7 (all-MiniLM-L6-v2, 6 layers)", str(shipped_verifier_dir()), None),
            ("SmolLM2-135M, 30 layers", smol, None), ("SmolLM2-135M, first 8 layers", smol, 8),
            ("SmolLM2-135M, first 4 layers", smol, 4)]
    base = None
    print("| backbone | parameters (M) | ms per pair | x v7 |\n|---|---|---|---|")
    for name, d, layers in rows:
        s, n = per_pair(d, layers)
        base = base or s
        print(f"| {name} | {n:.1f} | {s * 1000:.1f} | {s / base:.2f} |", flush=True)
