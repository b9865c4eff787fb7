"""Benchmark: N samples for one long prompt, shared prefill (franq) vs
``model.generate(num_return_sequences=N)`` on the embedded model.

Both decode exactly ``--new-tokens`` tokens per sequence (EOS and newline stops are off
for this measurement) so they do the same decoding work; runs are interleaved A, B, A, B
and the table reports medians and the median of per-pair ratios.

    PYTHONPATH=$PWD python experiments/2026-11-22-shared-prefill-sampling/bench_sampling.py --prompt-tokens 600 --n 10 --repeats 3
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt-tokens", type=int, default=600)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", default=None)
    ap.add_argument("--components", action="store_true", help="time 1 vs --new-tokens tokens per method")
    args = ap.parse_args()

    from transformers import GenerationConfig

    from franq.lm import CausalLM
    from franq.lm.sampling import Sampler
    from franq.types import Passage

    lm = CausalLM.load(args.model)
    text = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
            "It is named after the engineer Gustave Eiffel, whose company designed and built the tower. ") * 60
    words = text.split()
    lo, hi = 10, len(words)
    while lo < hi:  # longest passage whose prompt fits the token budget
        mid = (lo + hi + 1) // 2
        ids = lm.rag_prompt("Who designed the Eiffel Tower?", [Passage(" ".join(words[:mid]))]).ids
        lo, hi = (mid, hi) if len(ids) <= args.prompt_tokens else (lo, mid - 1)
    prompt = list(lm.rag_prompt("Who designed the Eiffel Tower?", [Passage(" ".join(words[:lo]))]).ids)
    sampler = Sampler(lm)
    sampler._is_eos[:] = False  # benchmark only: fixed-length decoding for both methods
    cfg = GenerationConfig(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=args.new_tokens,
                           min_new_tokens=args.new_tokens, num_return_sequences=args.n,
                           pad_token_id=lm.pad_id, eos_token_id=lm.tokenizer.eos_token_id)
    ids = torch.tensor([prompt])

    def shared(k=args.new_tokens):
        s = sampler.sample(prompt, args.n, max_new_tokens=k, stop_at_newline=False, seed=0)
        assert all(len(x.token_ids) == k for x in s.samples)

    def hf(k=args.new_tokens):
        c = GenerationConfig(**{**cfg.to_dict(), "max_new_tokens": k, "min_new_tokens": k})
        with torch.inference_mode():
            out = lm.model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=c)
        assert out.shape == (args.n, len(prompt) + k)

    shared()  # warm-up (allocator, kernels)
    times = {"shared": [], "generate": []}
    for r in range(0 if args.components else args.repeats):
        for name, fn in (("shared", shared), ("generate", hf)) if r % 2 == 0 else (("generate", hf), ("shared", shared)):
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
            print(f"repeat {r} {name}: {times[name][-1]:.2f} s", flush=True)
    if args.components:  # one new token: the prefill part of each method
        for name, fn in (("shared", shared), ("generate", hf)):
            cost = {}
            for k in (1, args.new_tokens):
                t = time.perf_counter()
                fn(k)
                cost[k] = time.perf_counter() - t
            print(f"components {name}: 1 token {cost[1]:.2f} s, {args.new_tokens} tokens "
                  f"{cost[args.new_tokens]:.2f} s, decode {cost[args.new_tokens] - cost[1]:.2f} s", flush=True)
        return
    ratios = [g / s for g, s in zip(times["generate"], times["shared"])]
    print(f"\nprompt tokens {len(prompt)}, N = {args.n}, new tokens {args.new_tokens}, threads {torch.get_num_threads()}")
    print("| method | median s | runs (s) |")
    print("|---|---|---|")
    for name in ("shared", "generate"):
        print(f"| {name} | {statistics.median(times[name]):.2f} | {', '.join(f'{t:.2f}' for t in times[name])} |")
    print(f"\nspeed-up generate / shared: median {statistics.median(ratios):.2f}x "
          f"(per-pair ratios {', '.join(f'{x:.2f}' for x in ratios)})")


if __name__ == "__main__":
    main()
