"""Build the 50-answer throughput benchmark input from the raw ExpertQA release.

    python scripts/build_batch_bench.py [--raw DIR (default: $FRANQ_RAW_DATA)] \
        [--out datasets/expertqa-batch50/answers.jsonl] [--n 50] [--max-passage-chars 1500]

One franq input line per answer: ``id``, ``question``, the answer's cited evidence as
``passages`` (``{"title": url, "text": ...}``, in citation order) and ``answer``. Answers
are taken in file order from ``expertqa_rand_val.jsonl``; an answer is kept when it has
cited evidence and its passages total at most ``--max-passage-chars`` characters (keeps
the benchmark modest on a shared CPU). See datasets/expertqa-batch50/README.md.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

from franq.evaluation.data import raw_data_dir

EVIDENCE_RE = re.compile(r"^\[(\d+)\]\s*(\S*)\s*\n+(.*)$", re.S)


def evidence_passages(answer: dict) -> list[dict]:
    """The cited evidence of all claims of one answer, one passage per citation number."""
    found: dict[str, dict] = {}
    for claim in answer.get("claims") or []:
        evidence = claim.get("evidence") or []
        if isinstance(evidence, str):  # some releases store the list as its repr
            try:
                evidence = ast.literal_eval(evidence)
            except (ValueError, SyntaxError):
                evidence = [evidence]
        for ev in evidence:
            if not isinstance(ev, str) or not ev.strip():
                continue
            m = EVIDENCE_RE.match(ev.strip())
            key, url, body = (m.group(1), m.group(2), m.group(3)) if m else (ev[:40], "", ev)
            body = " ".join(body.split())
            if body and key not in found:
                found[key] = {"title": url, "text": body}
    order = sorted(found, key=lambda k: int(k) if k.isdigit() else 10**6)
    return [found[k] for k in order]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", default=None, help="raw data folder (default: $FRANQ_RAW_DATA)")
    ap.add_argument("--out", default="datasets/expertqa-batch50/answers.jsonl")
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--max-passage-chars", type=int, default=1500)
    args = ap.parse_args()
    rows = []
    with open(raw_data_dir(args.raw) / "expertqa_rand_val.jsonl", encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            record = json.loads(line)
            for system, answer in record["answers"].items():
                text = (answer.get("answer_string") or "").strip()
                passages = evidence_passages(answer)
                if not text or not passages or sum(len(p["text"]) for p in passages) > args.max_passage_chars:
                    continue
                rows.append({"id": f"expertqa-rand-val-{line_no}-{system}", "question": record["question"],
                             "passages": passages, "answer": text})
            if len(rows) >= args.n:
                break
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        for row in rows[: args.n]:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {min(len(rows), args.n)} answers to {out}")


if __name__ == "__main__":
    main()
