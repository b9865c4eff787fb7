"""Build the WiCE faithfulness dataset (franq format) from the raw WiCE claim-level dev split.

    python scripts/build_wice.py [--raw DIR or FILE (default: $FRANQ_RAW_DATA/wice_claim_dev.jsonl)] [--out datasets/wice]

Each WiCE item is a Wikipedia sentence (the claim), the web page it cites (the evidence,
a list of sentences) and a label: supported / partially_supported / not_supported. One
franq record per item: ``question`` names the article and section the sentence comes from,
``answer`` is the claim, ``passages`` is the cited page as one passage (title = its page
title line), ``claims`` is the claim with ``is_faithful`` = supported (partially and not
supported are unfaithful, as support Complete is faithful in ExpertQA).

Split deterministically by the SHA-256 of the WiCE id: ``fit.jsonl`` (60%, for fitting
probes and maps) and ``heldout.jsonl`` (40%, kept apart from every fit, for benchmarks).
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from franq.evaluation.data import raw_data_dir

ROOT = Path(__file__).resolve().parents[1]


def convert(row: dict) -> dict:
    meta = row["meta"]
    title = meta.get("claim_title", "").strip()
    section = meta.get("claim_section", "").strip().rstrip(".")
    lines = [s.strip() for s in row["evidence"] if s.strip()]
    page_title = lines[0].replace("(meta data) TITLE:", "").strip() if lines and lines[0].startswith("(meta data)") else ""
    body = lines[1:] if page_title else lines
    question = f"What does the Wikipedia article on {title} say in its section '{section}'?"
    return {"id": f"wice-{meta['id']}", "question": question,
            "passages": [{"title": page_title, "text": " ".join(body)}],
            "answer": row["claim"].strip(),
            "claims": [{"text": row["claim"].strip(), "is_true": None,
                        "is_faithful": row["label"] == "supported"}]}


def part(ident: str) -> str:
    return "fit" if int(hashlib.sha256(ident.encode()).hexdigest()[:8], 16) % 10 < 6 else "heldout"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", default=None, help="the raw data folder or wice_claim_dev.jsonl (default: $FRANQ_RAW_DATA)")
    ap.add_argument("--out", default=str(ROOT / "datasets/wice"))
    args = ap.parse_args()
    raw = Path(args.raw) if args.raw and Path(args.raw).is_file() else raw_data_dir(args.raw) / "wice_claim_dev.jsonl"
    out = {"fit": [], "heldout": []}
    for line in open(raw, encoding="utf-8"):
        rec = convert(json.loads(line))
        out[part(rec["id"])].append(rec)
    for name, recs in out.items():
        with open(Path(args.out) / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for r in recs:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        pos = sum(r["claims"][0]["is_faithful"] for r in recs)
        print(f"{name}.jsonl: {len(recs)} claims, {pos} supported, {len(recs) - pos} partially/not supported")


if __name__ == "__main__":
    main()
