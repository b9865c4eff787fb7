"""Throughput of batch scoring on the embedded model (issue 8).

    python benchmarks/bench_batch.py [--input datasets/expertqa-batch50/answers.jsonl]
        [--chunks 5] [--ray-chunks 2] [--workers 2] [--out benchmarks/results/batch-throughput.json]

1. Batched vs one answer per call: the input is cut into ``--chunks`` chunks; each chunk
   is scored by both engines in ABBA order alternating between chunks (A = one answer
   per ``score_many`` call, B = dynamic token batches), through the real
   :func:`franq.runners.local.run_jsonl` path (validation, output file, fsync). Reported: total
   claims/s of each and the median of the per-chunk time ratios.
2. Ray on ``--workers`` local actors (1 CPU thread each) vs the plain batched path (all
   torch threads), on the first ``--ray-chunks`` chunks, interleaved; Ray's time includes
   its start and the actors' model loads, as a user pays them.
The CPU is shared with other jobs: compare ratios, not absolute times.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from franq.config import FranqConfig
from franq.runners.local import LocalRunner, run_jsonl


def timed_run(factory, path: Path, tmp: Path, tag: str):
    out = tmp / f"{tag}-{time.monotonic_ns()}.jsonl"
    t = time.perf_counter()
    summary = run_jsonl(factory, str(path), str(out), errors_path=str(out) + ".err", progress=False)
    return time.perf_counter() - t, summary


def compare(variants, chunks, tmp: Path, tag: str, after=lambda name: None) -> dict:
    """Time two variants on each chunk, in ABBA order across chunks; sum and take the
    median of the per-chunk ratios first/second."""
    (a, _), (b, _) = variants
    rows = []
    for k, chunk in enumerate(chunks):
        t = {}
        for name, factory in variants[:: -1 if k % 2 else 1]:
            t[name], s = timed_run(factory, chunk, tmp, name)
            t[name + "_claims"] = s.claims
            t[name + "_answers"] = s.scored
            after(name)
        rows.append(t)
        print(json.dumps({tag: k, **t}), flush=True)
    out: dict = {tag: rows}
    for name in (a, b):
        secs = sum(r[name] for r in rows)
        claims = sum(r[name + "_claims"] for r in rows)
        out[name] = {"seconds": secs, "claims": claims, "claims_per_s": claims / secs}
    out[f"median_ratio_{a}_over_{b}"] = statistics.median(r[a] / r[b] for r in rows)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default="datasets/expertqa-batch50/answers.jsonl")
    ap.add_argument("--chunks", type=int, default=5)
    ap.add_argument("--ray-chunks", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-batching", action="store_true", help="run only the Ray comparison")
    ap.add_argument("--device", help="cpu, cuda, cuda:1, ... (default: cuda when available)")
    ap.add_argument("--dtype", help="float32, bfloat16, float16 (default: float32 on CPU, bfloat16 on GPU)")
    ap.add_argument("--out", default="benchmarks/results/batch-throughput.json")
    args = ap.parse_args()
    import torch

    from franq.pipeline import Franq

    lines = Path(args.input).read_text(encoding="utf-8").splitlines()
    tmp = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    chunks = []
    size = -(-len(lines) // args.chunks)
    for k in range(args.chunks):
        p = tmp / f"chunk{k}.jsonl"
        p.write_text("\n".join(lines[k * size:(k + 1) * size]) + "\n", encoding="utf-8")
        chunks.append(p)
    config = FranqConfig.from_dict({"model": {"device": args.device, "dtype": args.dtype}})
    franq = Franq.from_config(config)
    single = lambda: LocalRunner(franq, batch_tokens=0)  # noqa: E731
    batched = lambda: LocalRunner(franq)  # noqa: E731
    warm = tmp / "warmup.jsonl"
    warm.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    timed_run(batched, warm, tmp, "warmup")
    result = {"torch_threads": torch.get_num_threads(), "answers": len(lines), "device": str(franq.lm.device),
              "dtype": str(next(franq.lm.model.parameters()).dtype)}
    if not args.skip_batching:
        result.update(compare([("single", single), ("batched", batched)], chunks, tmp, "chunk"))
        print(json.dumps({k: v for k, v in result.items() if k != "chunk"}), flush=True)
    if args.ray_chunks:
        from franq.runners.ray import RayRunner

        def ray_factory():
            return RayRunner(config, workers=args.workers, cpus_per_worker=1.0)

        def ray_shutdown(name):
            if name == "ray":
                import ray

                ray.shutdown()  # each Ray run pays its own start, as a CLI run does

        result.update(compare([("plain", batched), ("ray", ray_factory)], chunks[: args.ray_chunks], tmp,
                              "ray_chunk", after=ray_shutdown))
        result["workers"] = args.workers
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("chunk", "ray_chunk")}))


if __name__ == "__main__":
    main()
