"""Time and peak memory of franq on hostile files, two source trees side by side (the
bounded-work issue's file cases): /dev/zero as report input, config, faithfulness map and
calibrator; a huge single .json input; a gzip bomb as the trust pool; ``trust build
--poison 0.9999999``.

    python experiments/2026-11-24-bounded-work/bench_file_bounds.py --before /tmp/before --after . \\
        --out experiments/2026-11-24-bounded-work/file_bounds.md

Each case runs in a fresh ``python`` with ``PYTHONPATH`` set to the tree, under the same
address-space cap (``RLIMIT_AS``, default 3 GiB, so that an unbounded read ends in a
MemoryError instead of taking the machine) and the same wall-clock limit; peak memory is
the child's ``ru_maxrss``. Inputs are written to a scratch folder first.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_inputs(scratch: Path, json_mb: int, bomb_mb: int) -> dict[str, Path]:
    files = {}
    q = {"id": "q1", "question": "Who built the tower?", "answers": ["Eiffel"],
         "gold_passages": ["The tower was built by Eiffel."]}
    files["q"] = scratch / "q.jsonl"
    files["q"].write_text(json.dumps(q) + "\n" + json.dumps({**q, "id": "q2", "answers": ["Paris"],
                                                               "gold_passages": ["It is in Paris."]}) + "\n")
    files["pool"] = scratch / "pool.jsonl"
    files["pool"].write_text("".join(json.dumps({"id": f"p{i}", "title": "t", "text": f"Passage {i}."}) + "\n"
                                     for i in range(20)))
    files["bomb"] = scratch / "bomb.jsonl.gz"
    with gzip.open(files["bomb"], "wb", compresslevel=9) as f:
        block = b"\0" * 2**20
        for _ in range(bomb_mb):  # no newline: one endless line
            f.write(block)
    files["json"] = scratch / "big.json"
    passage = "The tower was built by Eiffel in 1889 and it is made of iron. " * 160  # ~10 KB
    n = json_mb * 2**20 // len(passage)
    with open(files["json"], "w") as f:
        f.write('{"question": "Who built the tower?", "answer": "Eiffel built it.", "passages": [')
        f.write(",".join(json.dumps(passage) for _ in range(n)))
        f.write("]}")
    return files


def cases(files: dict[str, Path], scratch: Path) -> list[tuple[str, list[str]]]:
    py = [sys.executable]
    return [
        ("report input /dev/zero", py + ["-m", "franq", "report", "/dev/zero", "-o", str(scratch / "r.html")]),
        ("config /dev/zero", py + ["-c", "from franq.config import FranqConfig; FranqConfig.from_file('/dev/zero')"]),
        ("faithfulness map /dev/zero",
         py + ["-c", "from franq.faithfulness.logistic import LogisticMap; LogisticMap.from_json('/dev/zero')"]),
        ("calibrator /dev/zero", py + ["-c", "from franq.calibrate import load_calibrator; load_calibrator('/dev/zero')"]),
        (f"single .json input ({files['json'].stat().st_size >> 20} MB)",
         py + ["-m", "franq", "score", str(files["json"]), "--faithfulness", "lexical", "--quiet"]),
        (f"gzip bomb as trust pool ({files['bomb'].stat().st_size >> 10} KB -> endless line)",
         py + ["-m", "franq", "trust", "build", str(files["q"]), "--pool", str(files["bomb"]),
               "--out", str(scratch / "c.jsonl"), "--distractors", "0"]),
        ("trust build --poison 0.9999999",
         py + ["-m", "franq", "trust", "build", str(files["q"]), "--pool", str(files["pool"]),
               "--out", str(scratch / "c.jsonl"), "--poison", "0.9999999", "--distractors", "0"]),
    ]


def run(cmd: list[str], tree: Path, cap_bytes: int, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=limit,
                             cwd=tempfile.gettempdir())
        timed_out = False
        while True:  # reap it ourselves: os.wait4 gives this child's own peak memory
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                p.kill()
                timed_out = True
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.05)
        seconds = time.perf_counter() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        out = log.read().decode("utf-8", "replace")
    lines = [x for x in out.splitlines() if x.strip()]
    if timed_out:
        outcome = f"no result in {timeout:.0f} s (killed)"
    elif "MemoryError" in out:
        outcome = "MemoryError at the cap"
    else:
        outcome = (lines[-1] if lines else "")[:110]
    return {"seconds": seconds, "peak_mb": usage.ru_maxrss / 1024, "rc": p.returncode, "outcome": outcome}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="source tree before the change")
    ap.add_argument("--after", type=Path, default=Path("."), help="source tree after the change")
    ap.add_argument("--cap-gib", type=float, default=3.0, help="address-space cap per run")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per run")
    ap.add_argument("--json-mb", type=int, default=20, help="size of the single .json input")
    ap.add_argument("--bomb-mb", type=int, default=4096, help="decompressed size of the gzip bomb")
    ap.add_argument("--out", type=Path, default=None, help="write the table (markdown) here")
    args = ap.parse_args()
    cap = int(args.cap_gib * 2**30)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        files = make_inputs(scratch, args.json_mb, args.bomb_mb)
        rows = []
        for name, cmd in cases(files, scratch):
            before = run(cmd, args.before.resolve(), cap, args.timeout)
            after = run(cmd, args.after.resolve(), cap, args.timeout)
            rows.append((name, before, after))
            print(f"{name}: before {before['seconds']:.1f} s {before['peak_mb']:.0f} MB ({before['outcome']}); "
                  f"after {after['seconds']:.1f} s {after['peak_mb']:.0f} MB ({after['outcome']})", flush=True)
    table = ["| case | before: time | before: peak RSS | before: outcome | after: time | after: peak RSS | after: outcome |",
             "|---|---|---|---|---|---|---|"]
    for name, b, a in rows:
        table.append(f"| {name} | {b['seconds']:.1f} s | {b['peak_mb']:.0f} MB | {b['outcome'].replace('|', '/')} | "
                     f"{a['seconds']:.1f} s | {a['peak_mb']:.0f} MB | {a['outcome'].replace('|', '/')} |")
    text = "\n".join(table)
    print(text)
    if args.out:
        command = "python experiments/2026-11-24-bounded-work/bench_file_bounds.py " + " ".join(sys.argv[1:])
        args.out.write_text(f"# franq on hostile files: time and peak memory before / after\n\n"
                            f"Command: `{command}`\n\nEach run: a fresh process, address space capped at "
                            f"{args.cap_gib:g} GiB (RLIMIT_AS), {args.timeout:.0f} s wall-clock limit, "
                            f"OMP_NUM_THREADS=1; peak = the child's ru_maxrss.\n\n{text}\n")


if __name__ == "__main__":
    main()
