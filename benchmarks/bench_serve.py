"""What keeping the model loaded buys: `franq score --example` (a process per answer, the
model loaded each time) against `franq serve` (loaded once, then POST /score per answer).

    OMP_NUM_THREADS=1 python benchmarks/bench_serve.py [--requests 5] [--out benchmarks/results/serve.md]

Both score the bundled example with the default (embedded) stack on this machine; the
table gives wall-clock seconds. Writes the table and the command to --out.

The service's hostile cases before and after issue 29 (``bounds``) are a record in
experiments/2026-11-24-bounded-work/.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def cli_seconds() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "franq", "score", "--example", "--format", "json"], check=True,
                   capture_output=True, cwd=ROOT)
    return time.perf_counter() - t0


def serve_seconds(n: int) -> tuple[float, list[float]]:
    example = json.loads(resources.files("franq").joinpath("data/example.json").read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "franq", "serve", "--port", "0"], stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    try:
        line = ""
        while "franq serve:" not in line:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                raise SystemExit(f"franq serve exited with {proc.returncode}")
        url = re.search(r"on (http://\S+/)", line).group(1)
        while True:
            try:
                httpx.get(url + "health")
                break
            except httpx.TransportError:
                time.sleep(0.05)
        ready = time.perf_counter() - t0
        times = []
        for _ in range(n):
            t = time.perf_counter()
            r = httpx.post(url + "score", json=example, timeout=600)
            r.raise_for_status()
            times.append(time.perf_counter() - t)
        return ready, times
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "serve.md"))
    args = ap.parse_args()
    cli = [cli_seconds() for _ in range(2)]
    ready, times = serve_seconds(args.requests)
    rows = [("franq score --example (new process, model loaded each call)", f"{statistics.median(cli):.1f}",
             f"{min(cli):.1f}-{max(cli):.1f}", len(cli)),
            ("franq serve: start until /health answers (loads the model once)", f"{ready:.1f}", "-", 1),
            ("franq serve: POST /score of the same example", f"{statistics.median(times):.2f}",
             f"{min(times):.2f}-{max(times):.2f}", len(times))]
    table = ["| what | median s | range s | runs |", "|---|---|---|---|"]
    table += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    cmd = f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '?')} python benchmarks/bench_serve.py " \
          f"--requests {args.requests}"
    text = "\n".join(["# `franq serve` against one CLI process per answer", "",
                      f"Command: `{cmd}` ({time.strftime('%Y-%m-%d')}, shared 2-core CPU, other jobs running; "
                      "the bundled example, default embedded stack, 5 claims).", "", *table, ""])
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
