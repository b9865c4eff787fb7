"""Bounded work, before and after (issue 29): time and peak memory of the hostile cases,
each run side by side on two source trees (e.g. ``main`` before the change and this tree).

    git archive <before-commit> | tar -x -C /tmp/before
    python experiments/2026-11-24-bounded-work/bench_bounds.py --before /tmp/before [--after .] [--sizes 2000,3000]
                                   [--after-sizes 2000,3000,10000,100000] [--timeout 400] [--mem-gb 4]

Each case is one ``python -m franq ...`` process under ``/usr/bin/time -v`` (peak resident
memory) with ``ulimit -v`` (address space capped, so a run that would eat the machine ends
in a MemoryError instead) and a wall-clock timeout; the embedded model, one torch thread.
Cases: a batch line of N tiny passages that cannot fit the 8,192-token context (the
"give fewer passages" error: 132 s for 3,000 before), ``threads = 1000000`` in the config
and ``--threads 1000000``, ``uq.n_samples = 1000000000`` (short form), and a line with
1,000,000 passages. The table, the commands and the machine's load go to
experiments/2026-11-24-bounded-work/bounds.md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bounds.md"
Q, A = "Where is the Eiffel Tower?", "It is in Paris."


FIT_WORKER = """
import json, resource, sys, time
from transformers import AutoTokenizer
from franq.lm import CausalLM
from franq.lm.load import dequantized_cache, embedded_gguf_path
from franq.errors import ContextOverflowError
from franq.types import Passage
lm = CausalLM.__new__(CausalLM)
lm.tokenizer = AutoTokenizer.from_pretrained(dequantized_cache(embedded_gguf_path()))
lm.max_context = int(sys.argv[2])
passages = [Passage("p")] * int(sys.argv[1])
start = time.process_time()
try:
    lm.rag_prompt("Where is the Eiffel Tower?", passages, reserve=16)
    ended = "fits"
except ContextOverflowError as exc:
    ended = str(exc)[-60:]
print(json.dumps({"cpu": time.process_time() - start, "ended": ended}))
"""
"""Context fitting alone: the embedded tokenizer (no model weights), N tiny passages."""


def tiny_line(n: int) -> str:
    return json.dumps({"id": f"tiny-{n}", "question": Q, "answer": A, "passages": ["p"] * n})


def run(tree: Path, args: list[str], work: Path, timeout: int, mem_gb: float) -> dict:
    """One ``python -m franq ARGS`` (or ``python -c FIT_WORKER ARGS`` when ``args[0]`` is
    ``fit``) in ``work`` with ``tree`` on PYTHONPATH: wall seconds, CPU seconds, peak RSS
    (MB), exit status and the one line it ended with."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    cap = int(mem_gb * 2**20)  # KiB for ulimit -v
    program = ["-c", FIT_WORKER, *args[1:]] if args[0] == "fit" else ["-m", "franq", *args]
    inner = f"ulimit -v {cap}; exec {shlex.quote(sys.executable)} {' '.join(map(shlex.quote, program))}"
    start = time.perf_counter()
    proc = subprocess.Popen(["/usr/bin/time", "-v", "bash", "-c", inner], cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    peak_kb, cpu_s, timed_out = 0, 0.0, False
    while True:  # poll memory and CPU too: a run killed at the timeout gets no report from time -v
        try:
            out, err = proc.communicate(timeout=1)
            break
        except subprocess.TimeoutExpired:
            peak_kb = max(peak_kb, _tree_peak_kb(proc.pid))
            cpu_s = max(cpu_s, _tree_cpu_s(proc.pid))
            if time.perf_counter() - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
                timed_out = True
                break
    wall = time.perf_counter() - start
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    if rss is None and peak_kb:
        rss = re.search(r"(\d+)", str(peak_kb))
    user, system = (re.search(rf"{k} time \(seconds\): ([\d.]+)", err) for k in ("User", "System"))
    if user and system:
        cpu_s = float(user.group(1)) + float(system.group(1))
    status = re.search(r"Exit status: (\d+)", err)
    signalled = re.search(r"Command terminated by signal (\d+)", err)
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("\t") and "Command " not in x]
    errors = work / "out.jsonl.errors.jsonl"
    ended = ""
    if args[0] == "fit" and out.strip():
        fit = json.loads(out.strip().splitlines()[-1])
        ended = f"fitting alone: {fit['cpu']:.2f} CPU s; ...{fit['ended']}"
    elif errors.exists() and errors.read_text().strip():
        ended = "error record: " + json.loads(errors.read_text().splitlines()[0])["error"]
    elif lines:
        ended = lines[-1]
    if timed_out:
        ended = f"killed after the {timeout} s timeout" + (f" (last: {ended})" if ended else "")
    return {"wall": wall, "cpu": cpu_s, "rss_mb": int(rss.group(1)) / 1024 if rss else float("nan"),
            "status": ("timeout" if timed_out else f"signal {signalled.group(1)}" if signalled
                       else status.group(1) if status else "?"),
            "ended": ended.strip()[:300], "args": args}


def _tree_peak_kb(pid: int) -> int:
    """The largest VmHWM (peak resident set) among ``pid`` and its descendants, in KiB."""
    best = 0
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        hwm = re.search(r"VmHWM:\s+(\d+)", status)
        best = int(hwm.group(1)) if hwm else 0
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return best
    return max([best, *(_tree_peak_kb(int(c)) for c in children)])


def _tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its descendants (from /proc, while they run)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    return own + sum(_tree_cpu_s(int(c)) for c in children)


def case(name: str, tree: Path, files: dict[str, str], args: list[str], timeout: int, mem_gb: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for fname, text in files.items():
            (work / fname).write_text(text)
        result = run(tree, args, work, timeout, mem_gb)
    result["case"] = name
    print(f"{name:55s} {result['wall']:8.1f} s {result['cpu']:8.1f} cpu-s {result['rss_mb']:8.0f} MB  exit {result['status']}: "
          f"{result['ended'][:120]}", flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="source tree before the change")
    ap.add_argument("--after", type=Path, default=ROOT, help="source tree after the change (default: this one)")
    ap.add_argument("--sizes", default="2000,3000", help="tiny-passage counts run on both trees")
    ap.add_argument("--after-sizes", default="10000,100000", help="tiny-passage counts run after only")
    ap.add_argument("--timeout", type=int, default=400)
    ap.add_argument("--mem-gb", type=float, default=4.0)
    ap.add_argument("--fit-sizes", default="500,1000,2000", help="passage counts for the fitting-alone cases")
    ap.add_argument("--fit-context", type=int, default=2048, help="context size for the fitting-alone cases")
    ap.add_argument("--cases", default="fit,tiny,settings,million", help="which groups of cases to run")
    ap.add_argument("--append", action="store_true", help="add this run's table to --out instead of replacing it")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    t, m = args.timeout, args.mem_gb
    groups = set(args.cases.split(","))
    rows = []
    batch = ["score", "in.jsonl", "-o", "out.jsonl", "--quiet"]
    for n in [int(x) for x in args.fit_sizes.split(",") if x and "fit" in groups]:
        for side, tree in (("before", args.before), ("after", args.after)):
            rows.append(case(f"fitting alone, {n:,} tiny passages, context {args.fit_context} ({side})", tree, {},
                             ["fit", str(n), str(args.fit_context)], t, m))
    for n in [int(x) for x in args.sizes.split(",") if x and "tiny" in groups]:
        files = {"in.jsonl": tiny_line(n) + "\n"}
        rows.append(case(f"{n:,} tiny passages (before)", args.before, files, batch, t, m))
        rows.append(case(f"{n:,} tiny passages (after, --limit passages={n})", args.after, files,
                         batch + ["--limit", f"passages={n}"], t, m))
        if n > 1000:
            rows.append(case(f"{n:,} tiny passages (after, default limits)", args.after, files, batch, t, m))
    for n in [int(x) for x in args.after_sizes.split(",") if x and "tiny" in groups]:
        rows.append(case(f"{n:,} tiny passages (after, --limit passages={n})", args.after,
                         {"in.jsonl": tiny_line(n) + "\n"}, batch + ["--limit", f"passages={n}"], t, m))
    example = ["score", "--example", "--quiet"]
    threads = {"cfg.toml": "[model]\nthreads = 1000000\n"}
    samples = {"cfg.toml": 'mode = "short"\n\n[uq]\nn_samples = 1000000000\n'}
    million = {"in.jsonl": tiny_line(1_000_000) + "\n"}
    settings = [("threads = 1000000 (config)", threads, example + ["--config", "cfg.toml"]),
                ("--threads 1000000", {}, example + ["--threads", "1000000"]),
                ("uq.n_samples = 1000000000 (short form)", samples, example + ["--config", "cfg.toml"])]
    for label, files, cmd in ((settings if "settings" in groups else [])
                              + ([("a line with 1,000,000 passages", million, batch)] if "million" in groups else [])):
        for side, tree in (("before", args.before), ("after", args.after)):
            rows.append(case(f"{label} ({side})", tree, files, cmd, t, m))
    write(rows, args)


def write(rows: list[dict], args) -> None:
    load = os.getloadavg()
    head = ["# Bounded work: before and after (issue 29)", ""] if not (args.append and args.out.exists()) else [""]
    lines = head + [
             "Each case is one `franq` process on the embedded model (one torch thread), its address space "
             f"capped with `ulimit -v` at {args.mem_gb:g} GB and killed after {args.timeout} s; "
             "time is wall clock and CPU (user + system: the fairer measure on a loaded machine), memory is "
             "the peak resident set (`/usr/bin/time -v`; polled from /proc for a run killed at the timeout). "
             "Before and after ran side by side on the same machine "
             f"({os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end: "
             "a busy shared machine, so compare ratios).", "",
             "Made with:", "",
             f"    python experiments/2026-11-24-bounded-work/bench_bounds.py --before {args.before} --cases {args.cases} --sizes {args.sizes} "
             f"--after-sizes {args.after_sizes} --fit-sizes {args.fit_sizes} --fit-context {args.fit_context} "
             f"--timeout {args.timeout} --mem-gb {args.mem_gb:g}", "",
             "| case | command | wall (s) | CPU (s) | peak memory (MB) | exit | how it ended |",
             "|---|---|---:|---:|---:|---|---|"]
    for r in rows:
        ended = r["ended"].replace("|", "\\|")
        command = (f"FIT_WORKER {' '.join(r['args'][1:])}" if r["args"][0] == "fit" else
                   f"franq {' '.join(r['args'])}")
        lines.append(f"| {r['case']} | `{command}` | {r['wall']:.1f} | {r['cpu']:.1f} | "
                     f"{r['rss_mb']:.0f} | "
                     f"{r['status']} | {ended} |")
    old = args.out.read_text() if args.append and args.out.exists() else ""
    args.out.write_text(old + "\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
