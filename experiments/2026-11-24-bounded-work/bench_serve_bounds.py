"""The service cases of issue 29, before and after, side by side (run through
``python scripts/bench_serve.py bounds --before DIR``, a subcommand since removed; now
``python bench_serve_bounds.py --before DIR``).

Each version's ``franq serve`` (embedded model, lexical faithfulness, no calibrator) is
started from its own source tree and sent, one case at a time:

- ``passages``: a /score with 2,000 tiny passages (a ~20 KB body), and 1 s later a
  normal /score: how long each took (the issue: the model held 39 s, the normal request
  waiting 37 s behind it);
- ``render``: a /render of ~318 KB (19,000 char_spans), and 0.5 s later GET /health;
  then a /render at the span limit (10,000 spans) the same way;
- ``score_many``: /score_many with ``--examples`` examples of 16 KB of passages each,
  with /health 1 s later; the client waits at most ``--cap`` seconds;
- ``sigterm``: a fresh server, the same /score_many in progress, SIGTERM after 3 s:
  seconds until the process exits (killed after ``--cap``).

Seconds are wall clock on this machine; peak memory is the server's VmHWM.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = {"question": "When was the Eiffel Tower built?",
           "passages": [{"title": "Eiffel Tower", "text": "The Eiffel Tower was built from 1887 to 1889."}],
           "answer": "The Eiffel Tower was built from 1887 to 1889. It is made of gold."}


def start(src: Path, extra: list[str]) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.Popen([sys.executable, "-m", "franq", "serve", "--port", "0", "--faithfulness", "lexical",
                             "--calibrator", "none", *extra], cwd=src, env=env, stderr=subprocess.PIPE, text=True)
    line = ""
    while "franq serve:" not in line:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            raise SystemExit(f"franq serve ({src}) exited with {proc.returncode}")
    threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
    url = re.search(r"on (http://\S+)/", line).group(1)
    while True:
        try:
            httpx.get(url + "/health", timeout=600)
            return proc, url
        except httpx.TransportError:
            time.sleep(0.1)


def peak_mib(proc: subprocess.Popen) -> str:
    try:
        text = Path(f"/proc/{proc.pid}/status").read_text()
    except OSError:
        return "-"
    kib = int(re.search(r"VmHWM:\s+(\d+)", text).group(1))
    return f"{kib / 1024:.0f}"


def timed(method: str, url: str, cap: float, **kw) -> str:
    t = time.perf_counter()
    try:
        r = httpx.request(method, url, timeout=cap, **kw)
        return f"{r.status_code} in {time.perf_counter() - t:.1f} s"
    except httpx.TimeoutException:
        return f"no answer in {cap:.0f} s"
    except httpx.TransportError as exc:
        return f"{type(exc).__name__} after {time.perf_counter() - t:.1f} s"


def with_probe(main: tuple, probe: tuple, delay: float, cap: float) -> tuple[str, str]:
    """``main`` (method, url, kwargs) and, ``delay`` s after it started, ``probe``: both timed."""
    out = {}
    worker = threading.Thread(target=lambda: out.update(main=timed(main[0], main[1], cap, **main[2])))
    worker.start()
    time.sleep(delay)
    out["probe"] = timed(probe[0], probe[1], cap, **probe[2])
    worker.join()
    return out["main"], out["probe"]


def render_body(n_spans: int) -> dict:
    answer = "word " * (n_spans // 2 + 10)
    claims = [{"claim": {"text": "word", "char_spans": [[5 * i, 5 * i + 4] for i in range(k, n_spans, 50)]},
               "status": "scored", "p_true_raw": 0.5, "p_faithful": 0.5, "uq_faith": 0.5, "uq_unfaith": 0.5}
              for k in range(50)]
    return {"question": "q", "answer": answer, "claims": claims, "passages": ["word"], "mode": "long",
            "model": "m", "faithfulness": "lexical-v1", "warnings": []}


def big_examples(n: int) -> dict:
    text = "The Eiffel Tower in Paris was built from 1887 to 1889 by the company of Gustave Eiffel. " * 46
    return {"examples": [{**EXAMPLE, "passages": [text[:4000]] * 4, "id": i} for i in range(n)]}


def run_version(name: str, src: Path, args) -> dict:
    extra = ["--request-timeout", str(args.request_timeout)] if name == "after" else []
    rows = {}
    proc, url = start(src, extra)
    try:
        many = {**EXAMPLE, "passages": [f"p{i}" for i in range(2000)]}
        rows["passages"] = with_probe(("POST", url + "/score", {"json": many}),
                                      ("POST", url + "/score", {"json": EXAMPLE}), 1.0, args.cap)
        for label, n in (("render", 19_000), ("render_limit", 10_000)):
            body = render_body(n)
            size = len(json.dumps(body))
            rows[label] = (*with_probe(("POST", url + "/render", {"json": body}),
                                       ("GET", url + "/health", {}), 0.5, args.cap), size)
        rows["score_many"] = with_probe(("POST", url + "/score_many", {"json": big_examples(args.examples)}),
                                        ("GET", url + "/health", {}), 1.0, args.cap)
        rows["peak"] = peak_mib(proc)
    finally:
        proc.kill()
        proc.wait()
    proc, url = start(src, extra)
    worker = threading.Thread(target=timed, args=("POST", url + "/score_many", args.cap),
                              kwargs={"json": big_examples(args.examples)}, daemon=True)
    worker.start()
    time.sleep(3)
    t = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=args.cap)
        rows["sigterm"] = f"exited in {time.perf_counter() - t:.1f} s (status {proc.returncode})"
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        rows["sigterm"] = f"still running after {args.cap:.0f} s (killed)"
    return rows


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="source tree of the version to compare with")
    ap.add_argument("--examples", type=int, default=16, help="examples of 16 KB in the /score_many case")
    ap.add_argument("--cap", type=float, default=120.0, help="seconds a client waits at most")
    ap.add_argument("--request-timeout", type=float, default=30.0, help="the after server's --request-timeout")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "serve_bounds.md"))
    args = ap.parse_args(argv)
    before, after = run_version("before", Path(args.before).resolve(), args), run_version("after", ROOT, args)
    k = args.examples
    table = ["| case | before | after |", "|---|---|---|",
             f"| /score with 2,000 tiny passages | {before['passages'][0]} | {after['passages'][0]} |",
             f"| a normal /score sent 1 s later | {before['passages'][1]} | {after['passages'][1]} |"]
    for label, what in (("render", "19,000 spans"), ("render_limit", "10,000 spans (the limit)")):
        kb = before[label][2] / 1000
        table += [f"| /render of {kb:.0f} KB, {what} | {before[label][0]} | {after[label][0]} |",
                  f"| GET /health 0.5 s into it | {before[label][1]} | {after[label][1]} |"]
    table += [f"| /score_many, {k} examples of 16 KB | {before['score_many'][0]} | {after['score_many'][0]} |",
              f"| GET /health 1 s into it | {before['score_many'][1]} | {after['score_many'][1]} |",
              f"| SIGTERM 3 s into that /score_many | {before['sigterm']} | {after['sigterm']} |",
              f"| server peak memory (MiB, cases above but SIGTERM) | {before['peak']} | {after['peak']} |"]
    cmd = (f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '?')} python bench_serve_bounds.py "
           f"--before DIR --examples {k} --cap {args.cap:g} --request-timeout {args.request_timeout:g}")
    text = "\n".join([
        "# `franq serve` under the hostile cases of issue 29, before and after", "",
        f"Command: `{cmd}` ({time.strftime('%Y-%m-%d')}; DIR: `git archive` of main before the fix; shared "
        "2-core CPU with other jobs running; embedded model, lexical faithfulness, no calibrator; the after "
        f"server runs with `--request-timeout {args.request_timeout:g}` and the default limits).", "",
        *table, "",
        "Each cell: the HTTP status and the seconds it took as the client saw it (a client gives up after "
        f"{args.cap:g} s). The after column refuses what is over franq's limits (413: 2,000 passages > 1,000; "
        "19,000 spans > 10,000), segments spans in O(n log n) off the event loop, stops a request at its time "
        "budget (504) and a request in progress on SIGTERM (503), then exits.", ""])
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
