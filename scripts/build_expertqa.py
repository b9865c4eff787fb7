"""Build the long-form benchmark files from the raw ExpertQA release.

    python scripts/build_expertqa.py [--raw DIR (default: $FRANQ_RAW_DATA)] [--out datasets/expertqa]

Writes ``train.jsonl`` (rand_val + domain_val) and ``test.jsonl`` (rand_test) in franq's
input format: one answer per line with its question, its cited evidence as passages and
its human claims with labels. See datasets/expertqa/README.md for the label mapping.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

from franq.evaluation.data import raw_data_dir

TRUE = {"Definitely correct", "Probably correct"}
FALSE = {"Likely incorrect", "Definitely incorrect"}
FAITHFUL = {"Complete"}
UNFAITHFUL = {"Missing", "Incomplete", "Partial"}
SPLITS = {"train": ["expertqa_rand_val.jsonl", "expertqa_domain_val.jsonl"], "test": ["expertqa_rand_test.jsonl"]}
EVIDENCE_RE = re.compile(r"^\[(\d+)\]\s*(\S*)\s*\n+(.*)$", re.S)


def label(value, positive, negative):
    return True if value in positive else False if value in negative else None


def evidence_items(evidence) -> list[str]:
    if isinstance(evidence, str):  # some releases store the list as its repr
        try:
            evidence = ast.literal_eval(evidence)
        except (ValueError, SyntaxError):
            evidence = [evidence]
    return [e for e in evidence or [] if isinstance(e, str) and e.strip()]


def convert(row: dict, ident: str) -> dict | None:
    (system, answer), = row["answers"].items()
    passages: dict[str, dict] = {}
    claims = []
    for c in answer["claims"]:
        text = (c.get("claim_string") or "").strip()
        if not text:
            continue
        for ev in evidence_items(c.get("evidence")):
            m = EVIDENCE_RE.match(ev.strip())
            key, url, body = (m.group(1), m.group(2), m.group(3)) if m else (ev[:40], "", ev)
            if body.strip() and key not in passages:
                passages[key] = {"title": url, "text": " ".join(body.split())}
        claims.append({"text": text, "is_true": label(c.get("correctness"), TRUE, FALSE),
                       "is_faithful": label(c.get("support"), FAITHFUL, UNFAITHFUL)})
    if not passages or not claims or not answer["answer_string"].strip():
        return None
    ordered = [passages[k] for k in sorted(passages, key=lambda k: int(k) if k.isdigit() else 10**6)]
    return {"id": ident, "question": row["question"], "passages": ordered,
            "answer": answer["answer_string"], "claims": claims}


def main() -> None:
    here = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", type=Path, default=None, help="raw data folder (default: $FRANQ_RAW_DATA)")
    ap.add_argument("--out", type=Path, default=here / "datasets" / "expertqa")
    args = ap.parse_args()
    args.raw = raw_data_dir(args.raw)
    args.out.mkdir(parents=True, exist_ok=True)
    for split, files in SPLITS.items():
        n_in = n_out = n_claims = n_true = n_false = 0
        with open(args.out / f"{split}.jsonl", "w", encoding="utf-8") as out:
            for name in files:
                for i, line in enumerate(open(args.raw / name, encoding="utf-8")):
                    n_in += 1
                    rec = convert(json.loads(line), f"{Path(name).stem}-{i}")
                    if rec is None:
                        continue
                    n_out += 1
                    n_claims += len(rec["claims"])
                    n_true += sum(c["is_true"] is True for c in rec["claims"])
                    n_false += sum(c["is_true"] is False for c in rec["claims"])
                    out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        print(f"{split}: {n_out}/{n_in} answers, {n_claims} claims ({n_true} true, {n_false} false, "
              f"{n_claims - n_true - n_false} unlabelled)")


if __name__ == "__main__":
    main()
