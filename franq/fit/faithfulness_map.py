"""Fit the logistic faithfulness maps (the ``combined`` and ``context-pmi`` backends'
JSON, :class:`~franq.faithfulness.logistic.LogisticMap`) from claims with support labels
(``is_faithful``): ``franq fit faithfulness``.

The text features need only the claim and the passages; the pass features (context PMI:
with- vs without-passages log-probabilities) come from a ``franq score`` output of the same
records (``--scores``), or, for the shipped map, from the committed long-form generations."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from franq.errors import InputError
from franq.faithfulness.base import passages_context
from franq.faithfulness.features import TEXT_FEATURES, feature_matrix, pass_features_from_sums
from franq.faithfulness.logistic import LogisticMap
from franq.lm.load import EMBEDDED_NAME
from franq.lm.prompts import PROMPT_VERSION
from franq.io import parse_claims, parse_passages

STACK = {"model": EMBEDDED_NAME, "prompt": PROMPT_VERSION, "lexical": "lexical-v1",
         "context": "passages_context: 'title. text' blocks joined by blank lines"}
"""What a map is fitted for; a text-only map (no pass features) records no model or prompt."""
PMI_FEATURES = ("pmi_mean",)
COMBINED_PMI_FEATURES = TEXT_FEATURES + ("pmi_mean", "rag_mean", "closed_mean")


@dataclass(frozen=True)
class LabelledClaim:
    answer_id: str
    index: int
    context: str
    claim: str
    is_faithful: bool
    passes: dict | None  # pmi_mean / rag_mean / closed_mean when scored


def scored_passes(path: str | Path) -> dict[tuple[str, int], dict]:
    """Per (answer id, claim index), the pass features of the scored claims of a ``franq
    score`` output file (claims scored with the claim_prob and parametric scorers)."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if not isinstance(rec, dict) or "id" not in rec or not isinstance(rec.get("claims"), list):
                raise InputError(f"{path} line {n}: expected a franq score record with 'id' and 'claims'")
            for i, c in enumerate(rec["claims"]):
                s = c.get("signals") or c.get("components") or {}
                if c.get("status") == "scored" and "log_claim_prob" in s and "log_parametric" in s:
                    out[(rec["id"], i)] = pass_features_from_sums(s["log_claim_prob"], s["log_parametric"],
                                                                  s["n_tokens"])
    return out


def labelled_claims(records, passes: dict[tuple[str, int], dict] | None = None) -> list[LabelledClaim]:
    """The claims with a support label (``is_faithful`` not null) of franq input records
    (dicts with ``passages`` and ``claims``), with their pass features when ``passes`` has them."""
    out = []
    for n, rec in enumerate(records, 1):
        if not isinstance(rec.get("claims"), list) or not isinstance(rec.get("passages"), list):
            raise InputError(f"record {n}: expected 'passages' and 'claims' lists (franq input with labelled claims)")
        ctx = passages_context(list(parse_passages(rec["passages"], f"record {n}")))  # strings or {title, text}
        texts, labels = parse_claims(rec["claims"], f"record {n}")
        rid = rec.get("id", str(n))
        for i, (text, label) in enumerate(zip(texts, labels)):
            if label.get("is_faithful") is None:
                continue
            out.append(LabelledClaim(rid, i, ctx, text, label["is_faithful"], (passes or {}).get((rid, i))))
    return out


def load_claims(dataset: str | Path, scores: str | Path | None = None) -> list[LabelledClaim]:
    """:func:`labelled_claims` of a JSONL file, pass features from ``scores`` when given."""
    with open(dataset, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    if not records:
        raise InputError(f"{dataset}: no records")
    return labelled_claims(records, scored_passes(scores) if scores else None)


def fit_map(names, claims: list[LabelledClaim], *, name: str, data: str, stack: dict | None = None) -> LogisticMap:
    """A logistic map over the features ``names`` of ``claims``, recording what it was
    fitted on; ``stack`` defaults to :data:`STACK` (without model and prompt for text-only maps)."""
    if not claims:
        raise InputError(f"{name}: no labelled claims to fit on")
    pairs = [(c.context, c.claim) for c in claims]
    passes = [c.passes for c in claims] if any(n not in TEXT_FEATURES for n in names) else None
    x = feature_matrix(names, pairs, passes)
    y = np.array([c.is_faithful for c in claims], dtype=int)
    if len(set(y.tolist())) != 2:
        raise InputError(f"{name}: the labelled claims are all {'faithful' if y[0] else 'unfaithful'}; "
                         "both labels are needed")
    if stack is None:
        stack = STACK if passes is not None else {k: v for k, v in STACK.items() if k not in ("model", "prompt")}
    return LogisticMap.fit(x, y, names, stack=stack,
                           fitted_on={"name": name, "data": data, "n_claims": len(claims),
                                      "positive_rate": round(float(y.mean()), 4)})


def fit_faithfulness(train: str | Path, out_dir: str | Path, *, scores: str | Path | None = None,
                     with_pmi: bool = False, only_pmi: bool = False, data_label: str | None = None) -> list[str]:
    """``franq fit faithfulness``: fit ``faithfulness-combined.json`` (text features; plus
    the pass features with ``with_pmi``) and, with ``scores``, ``faithfulness-context-pmi.json``
    into ``out_dir``. Returns one line per map written."""
    if (with_pmi or only_pmi) and not scores:
        raise InputError("--with-pmi / --only-pmi need --scores (franq score output of the same records)")
    claims = load_claims(train, scores)
    label = data_label or Path(train).name
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    scored = [c for c in claims if c.passes is not None]
    if scores:
        if not scored:
            raise InputError(f"--scores {scores}: no scored claims match {train}")
        path = out / "faithfulness-context-pmi.json"
        fit_map(PMI_FEATURES, scored, name="context-pmi-v1", data=label).to_json(path)
        lines.append(f"context-pmi-v1: {len(scored)} claims -> {path}")
    if only_pmi:
        return lines
    names = COMBINED_PMI_FEATURES if with_pmi else TEXT_FEATURES
    use = scored if with_pmi else claims
    name = "combined-pmi-v1" if with_pmi else "combined-v1"
    path = out / "faithfulness-combined.json"
    fit_map(names, use, name=name, data=label).to_json(path)
    lines.append(f"{name}: {len(use)} claims, features {list(names)} -> {path}")
    return lines
