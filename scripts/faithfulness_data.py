"""ExpertQA claims with support labels, for fitting and benchmarking faithfulness backends.

Reads ``datasets/expertqa/{train,test}.jsonl`` (franq input records with human claims) and,
when given, a ``franq score`` output file for the same records, from which the LM-pass
features (context PMI) of each claim are taken. Only claims with a support label
(``is_faithful`` not null) are kept; pass features only for claims franq scored.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from franq.faithfulness.features import pass_features_from_sums  # noqa: E402
from franq.lm.prompts import passages_context  # noqa: E402
from franq.types import Passage  # noqa: E402


@dataclass(frozen=True)
class LabelledClaim:
    answer_id: str
    index: int
    context: str
    claim: str
    is_faithful: bool
    passes: dict | None  # pmi_mean / rag_mean / closed_mean when scored


def load_claims(dataset: str | Path, scores: str | Path | None = None) -> list[LabelledClaim]:
    scored: dict[tuple[str, int], dict] = {}
    if scores and Path(scores).is_file():
        for line in open(scores, encoding="utf-8"):
            rec = json.loads(line)
            for i, c in enumerate(rec["claims"]):
                comp = c.get("components") or {}
                if c.get("status") == "scored" and "log_claim_prob" in comp:
                    scored[(rec["id"], i)] = pass_features_from_sums(
                        comp["log_claim_prob"], comp["log_parametric"], comp["n_tokens"])
    out = []
    for line in open(dataset, encoding="utf-8"):
        rec = json.loads(line)
        ctx = passages_context([Passage(p["text"], p.get("title", "")) for p in rec["passages"]])
        for i, c in enumerate(rec["claims"]):
            if c.get("is_faithful") is None:
                continue
            out.append(LabelledClaim(rec["id"], i, ctx, c["text"], bool(c["is_faithful"]),
                                     scored.get((rec["id"], i))))
    return out
