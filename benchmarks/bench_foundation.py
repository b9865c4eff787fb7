"""Foundation benchmark: FRANQ scoring overhead and the memory of `make run`.

    python benchmarks/bench_foundation.py [--repeats 7] [--out benchmarks/results/foundation.md]

1. Overhead: wall time of ``Franq.score`` on one long-form answer (decompose, align, two
   teacher-forced passes, faithfulness, mix) divided by the time of the two raw forward
   passes that plain transformers needs on the same token ids (``model(ids)``, with and
   without passages). Runs are interleaved (raw, franq, raw, franq, ...) and medians are
   compared, so load from other processes hits both alike. Target: <= 1.15.
2. Peak resident memory of ``franq score --example`` (what `make run` runs), measured on
   a child process. Target: <= 2 GB.
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent


def pick_example(path: Path) -> dict:
    """The ExpertQA test answer whose prompt length is closest to the median."""
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    rows.sort(key=lambda r: len(r["answer"]) + sum(len(p["text"]) for p in r["passages"]))
    return rows[len(rows) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--data", type=Path, default=ROOT / "datasets" / "expertqa" / "test.jsonl")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "foundation.md")
    ap.add_argument("--faithfulness", help="faithfulness backend (default: the config's)")
    ap.add_argument("--extra", default="", help="comma-separated extra long-form scorers, e.g. rauq,truth_probe")
    args = ap.parse_args()

    from franq.config import FranqConfig
    from franq.io import parse_example
    from franq.pipeline import Franq

    overrides = {"faithfulness.name": args.faithfulness} if args.faithfulness else {}
    extra = [e for e in args.extra.split(",") if e]
    config = FranqConfig().with_overrides(overrides)
    if extra:
        config = FranqConfig.from_dict({**config.to_dict(), "uq": {"long": {"extra": extra}}})
    franq = Franq.from_config(config)
    lm = franq.lm
    ex = parse_example({k: v for k, v in pick_example(args.data).items() if k != "claims"})
    answer_ids, _ = lm.encode_answer(ex.answer)
    rag = lm.rag_prompt(ex.question, ex.passages, reserve=len(answer_ids))
    closed = lm.closed_book_prompt(ex.question)
    rag_ids = torch.tensor([list(rag.ids) + answer_ids])
    closed_ids = torch.tensor([list(closed.ids) + answer_ids])

    def raw() -> None:
        with torch.inference_mode():
            lm.model(input_ids=rag_ids)
            lm.model(input_ids=closed_ids)

    def scored() -> None:
        franq.score_many([ex])

    raw(), scored()  # warm-up: allocator, spaCy pipeline, kernels
    t_raw, t_franq = [], []
    for _ in range(args.repeats):
        for fn, acc in ((raw, t_raw), (scored, t_franq)):
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    m_raw, m_franq = statistics.median(t_raw), statistics.median(t_franq)
    n_claims = len(franq.score_many([ex])[0].claims)

    cmd = [sys.executable, "-m", "franq", "score", "--example"]
    if args.faithfulness:
        cmd += ["--faithfulness", args.faithfulness]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    run_s = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    rows = [
        ("tokens (with passages / without)", f"{rag_ids.shape[1]} / {closed_ids.shape[1]}", ""),
        ("claims", str(n_claims), ""),
        ("raw: two transformers forward passes, median s", f"{m_raw:.3f}", ""),
        ("franq: Franq.score_many, median s", f"{m_franq:.3f}", ""),
        ("overhead ratio franq / raw", f"{m_franq / m_raw:.3f}", "<= 1.15"),
        ("`franq score --example` wall s (warm cache)", f"{run_s:.1f}", ""),
        ("`franq score --example` peak RSS MB", f"{peak_mb:.0f}", "<= 2048"),
    ]
    table = "| measure | value | target |\n|---|---|---|\n" + "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)
    header = (f"# Foundation benchmark\n\nCommand: `python {' '.join(sys.argv)}`  \n"
              f"Date: {datetime.date.today()}  \nMachine: {platform.machine()}, {torch.get_num_threads()} torch "
              f"threads, CPU, shared with other jobs (ratios are robust to that, absolute times are not)  \n"
              f"Model: {lm.name}; faithfulness: {franq.faithfulness.name}; extra scorers: {extra or 'none'}  \n"
              f"Input: ExpertQA test answer {ex.id} (median length), {len(ex.passages)} passages\n\n")
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(header + table + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
