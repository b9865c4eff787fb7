"""Torch CPU threads: 1 vs 2 on this machine, with and without a concurrent CPU hog.

    python benchmarks/bench_threads.py [--repeats 3]

The workload is what dominates franq's CPU time: teacher-forced passes of the embedded
model (``lm.continuation_logprobs``) over four fixed prompt + answer sequences of about 400
tokens. Each condition runs in a fresh process with ``torch.set_num_threads(k)`` (the
same as ``franq score --threads k``); the hog is one busy-looping process per core,
started before and stopped after. Outputs are compared across thread counts (max absolute
difference of the log-probabilities). The table and the machine's load average go to
benchmarks/results/threads.md.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "threads.md"
WORKER = """
import json, sys, time
import numpy as np
import torch
torch.set_num_threads(int(sys.argv[1]))
from franq.lm import CausalLM
lm = CausalLM.load(device="cpu")
text = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. " * 22)
items = [(lm.encode(text[: 1400 + 40 * k]), lm.encode(" It was designed by Gustave Eiffel's company.")) for k in range(4)]
lm.continuation_logprobs(items[:1])  # warm-up
out = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    lps = lm.continuation_logprobs(items, max_batch_tokens=512)
    out.append(time.perf_counter() - t)
print(json.dumps({"seconds": out, "logprobs": [lp.tolist() for lp in lps], "threads": torch.get_num_threads()}))
"""


def hog() -> None:  # pragma: no cover - a busy loop
    x = 0
    while True:
        x += 1


def run(threads: int, repeats: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    out = subprocess.run([sys.executable, "-c", WORKER, str(threads), str(repeats)], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows, outputs = [], {}
    for hogs in (0, os.cpu_count() or 2):
        procs = [mp.Process(target=hog, daemon=True) for _ in range(hogs)]
        for p in procs:
            p.start()
        try:
            for threads in (1, 2):
                load = os.getloadavg()[0]
                res = run(threads, args.repeats)
                outputs[threads, hogs] = res["logprobs"]
                s = np.array(res["seconds"])
                rows.append((hogs, threads, float(np.median(s)), float(s.min()), float(s.max()), load))
                print(rows[-1], file=sys.stderr, flush=True)
        finally:
            for p in procs:  # only the hog processes this script started
                p.terminate()
                p.join()
    base = {h: next(r[2] for r in rows if r[0] == h and r[1] == 1) for h in {r[0] for r in rows}}
    diff = max(float(np.max(np.abs(np.array(a) - np.array(b))))
               for k in outputs for a, b in zip(outputs[k], outputs[1, 0]))
    lines = ["| concurrent hog processes | torch threads | median s / workload | min-max | x vs 1 thread | "
             "load average before |", "|---|---|---|---|---|---|"]
    for hogs, threads, med, lo, hi, load in rows:
        lines.append(f"| {hogs} | {threads} | {med:.2f} | {lo:.2f}-{hi:.2f} | {med / base[hogs]:.2f} | {load:.1f} |")
    text = (f"# Torch CPU threads, 1 vs 2\n\nCommand: `python benchmarks/bench_threads.py --repeats {args.repeats}` "
            f"({os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). Workload: teacher-forced "
            "passes of the embedded SmolLM2-135M over 4 sequences of ~400 tokens. The machine is shared with other "
            "jobs (load average in the last column), so 'no hog' is not a quiet machine.\n\n"
            + "\n".join(lines) + f"\n\nLargest difference in any log-probability between conditions: {diff:.2e}.\n")
    print(text)
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
