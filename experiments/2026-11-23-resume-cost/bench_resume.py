"""What resuming costs now that every output line is read in full (issue 18).

    python experiments/2026-11-23-resume-cost/bench_resume.py [--lines 50000] [--out experiments/2026-11-23-resume-cost/resume-cost.md]

Writes ``--lines`` result lines shaped like ``franq score`` output (5 claims each, about
3 KB a line), then times opening them for a resume: (a) the old read, which decoded only
the id at the start of each line (a damaged line in the middle went unnoticed), and (b)
:class:`franq.runners.output.OutputLog`, which parses every line in full and checks that
it is a complete result. Both are timed three times, interleaved; the median is reported.
The CPU is shared with other jobs: compare the ratio, not absolute times.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from franq.runners.output import OutputLog, is_result_line

CLAIM = {"claim": {"text": "The Eiffel Tower is in Paris and was built in 1889.", "char_spans": [[0, 52]],
                   "token_positions": list(range(14)), "token_ids": list(range(100, 114)), "sentence": 0,
                   "check_worthy": True, "note": None},
         "status": "scored", "p_faithful": 0.8, "uq_faith": 0.7, "uq_unfaith": 0.4, "p_true_raw": 0.64,
         "p_true_calibrated": 0.6, "signals": {"claim_logprob": -3.2, "parametric_logprob": -4.1}}


def id_prefix_read(path: Path) -> int:
    """The read before issue 18: the id at the start of each line, the rest unread."""
    decoder, n = json.JSONDecoder(), 0
    with open(path, "rb") as f:
        for raw in f:
            decoder.raw_decode(raw.decode("utf-8"), 7)
            n += 1
    return n


def full_read(path: Path) -> int:
    log = OutputLog(str(path), is_record=is_result_line)
    try:
        return len(log.digests)
    finally:
        log.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=50_000)
    ap.add_argument("--out", default="experiments/2026-11-23-resume-cost/resume-cost.md")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for i in range(args.lines):
                f.write(json.dumps({"id": f"rec-{i}", "question": "Where is the Eiffel Tower? " * 3,
                                    "answer": "The Eiffel Tower is in Paris. " * 20, "claims": [CLAIM] * 5,
                                    "mode": "long", "model": "m", "faithfulness": "f", "stack": {"mode": "long"},
                                    "calibration": "none", "calibrator": None, "warnings": []}) + "\n")
        mib = path.stat().st_size / 2**20
        times: dict[str, list[float]] = {"id prefix only (before)": [], "every line in full (now)": []}
        for _ in range(3):
            for name, fn in zip(times, (id_prefix_read, full_read)):
                t = time.perf_counter()
                assert fn(path) == args.lines
                times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = [f"| {k} | {v:.2f} | {args.lines / v:,.0f} |" for k, v in med.items()]
    ratio = med["every line in full (now)"] / med["id prefix only (before)"]
    table = "\n".join([f"Resume read of {args.lines:,} result lines ({mib:.0f} MiB), median of 3:", "",
                       "| read | seconds | lines/s |", "|---|---:|---:|", *rows, "",
                       f"Full read / prefix read: {ratio:.1f}x."])
    print(table)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# Issue 18: resume read cost\n\nCommand: `python {' '.join(sys.argv)}`\n\n{table}\n",
                   encoding="utf-8")


if __name__ == "__main__":
    main()
