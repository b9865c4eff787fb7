"""Fit the packaged faithfulness maps on ExpertQA training answers (rand_val + domain_val).

    python scripts/fit_faithfulness.py                      # combined (text features) only
    python scripts/fit_faithfulness.py --scores benchmarks/cache/expertqa-train.embedded-lexical.jsonl

Writes ``franq/data/faithfulness-combined.json`` (logistic regression over the offline
text features, plus the context-PMI features when ``--scores`` is given and ``--with-pmi``)
and, with ``--scores``, ``franq/data/faithfulness-context-pmi.json``. ``--scores`` is a
``franq score`` output of the same records with the embedded default stack; each JSON
records the stack it was fitted for.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from faithfulness_data import ROOT, load_claims

from franq.faithfulness.features import TEXT_FEATURES, feature_matrix
from franq.faithfulness.logistic import LogisticMap
from franq.lm.load import EMBEDDED_NAME
from franq.lm.prompts import PROMPT_VERSION

STACK = {"model": EMBEDDED_NAME, "prompt": PROMPT_VERSION, "lexical": "lexical-v1",
         "context": "passages_context: 'title. text' blocks joined by blank lines"}


def fit(names, claims, *, name: str, data: str) -> LogisticMap:
    pairs = [(c.context, c.claim) for c in claims]
    passes = [c.passes for c in claims] if any(n not in TEXT_FEATURES for n in names) else None
    x = feature_matrix(names, pairs, passes)
    y = np.array([c.is_faithful for c in claims], dtype=int)
    stack = STACK if passes is not None else {k: v for k, v in STACK.items() if k != "model" and k != "prompt"}
    return LogisticMap.fit(x, y, names, stack=stack,
                           fitted_on={"name": name, "data": data, "n_claims": len(claims),
                                      "positive_rate": round(float(y.mean()), 4)})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", default=str(ROOT / "datasets/expertqa/train.jsonl"))
    ap.add_argument("--scores", help="franq score output for --train (embedded stack)")
    ap.add_argument("--with-pmi", action="store_true", help="add the context-PMI features to combined")
    ap.add_argument("--data-label", default="ExpertQA rand_val + domain_val (datasets/expertqa/train.jsonl)")
    ap.add_argument("--only-pmi", action="store_true", help="refit only the context-PMI map")
    ap.add_argument("--out", default=str(ROOT / "franq/data"))
    args = ap.parse_args()
    claims = load_claims(args.train, args.scores)
    out = Path(args.out)
    if args.scores:
        with_passes = [c for c in claims if c.passes is not None]
        if not with_passes:
            raise SystemExit(f"--scores {args.scores}: no scored claims match {args.train}")
        pmi = fit(("pmi_mean",), with_passes, name="context-pmi-v1", data=args.data_label)
        pmi.to_json(out / "faithfulness-context-pmi.json")
        print(f"context-pmi: {len(with_passes)} claims -> {out / 'faithfulness-context-pmi.json'}")
    if args.only_pmi:
        return
    names = TEXT_FEATURES + (("pmi_mean", "rag_mean", "closed_mean") if args.with_pmi else ())
    use = [c for c in claims if c.passes is not None] if args.with_pmi else claims
    name = "combined-pmi-v1" if args.with_pmi else "combined-v1"
    combined = fit(names, use, name=name, data=args.data_label)
    combined.to_json(out / "faithfulness-combined.json")
    print(f"{name}: {len(use)} claims, features {list(names)} -> {out / 'faithfulness-combined.json'}")


if __name__ == "__main__":
    main()
