"""Can surface cues tell the label of the contrastive verifier pairs (issue 44, item 1)?

    python benchmarks/bench_contrast_cues.py [--raw DIR] [--datasets datasets]   # --raw default: $FRANQ_RAW_DATA
        [--seed 0] [--out benchmarks/results/contrast-cues.md]

Builds the pairs of :func:`franq.fit.verifier.contrast.contrastive_pairs` twice, as shipped
(balanced per cue cell) and unbalanced (every pair made), and fits a cue-only classifier on
each source's training pairs: a logistic regression on the claim's length, its word overlap
with the premise, where the premise's nearest sentence starts, a digit and a negation word
(:func:`franq.fit.verifier.balance.cues`). Reported: its 3-way balanced accuracy on the same
source's dev pairs (held apart by document; chance 1/3, target <= 0.40) and, per kind, the
2-way balanced accuracy telling an edit from its supported twin (chance 1/2; fitted on the
training pairs of that kind, scored on its dev pairs, or 5-fold on train where dev has fewer
than 40).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from franq.fit.verifier.balance import cue_baseline, cues
from franq.fit.verifier.contrast import contrastive_pairs, documents, entity_spans, ner


def kind_baseline(train: list[dict], dev: list[dict]) -> float | None:
    """Twin (0) vs edit (1) of one kind, from cues alone."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if len({p["label"] for p in train}) < 2:
        return None
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    if len(dev) >= 40 and len({p["label"] for p in dev}) == 2:
        model.fit([cues(p) for p in train], [p["label"] for p in train])
        return float(balanced_accuracy_score([p["label"] for p in dev], model.predict([cues(p) for p in dev])))
    if len(train) < 50:
        return None
    pred = cross_val_predict(model, [cues(p) for p in train], [p["label"] for p in train], cv=5)
    return float(balanced_accuracy_score([p["label"] for p in train], pred))


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", type=Path, default=None, help="shared/data/raw (default: $FRANQ_RAW_DATA)")
    ap.add_argument("--datasets", type=Path, default=Path("datasets"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/contrast-cues.md"))
    args = ap.parse_args()
    from franq.evaluation.data import raw_data_dir

    args.raw = raw_data_dir(args.raw)
    t = time.time()
    docs = documents(args.raw, args.datasets)
    ents = entity_spans(sorted({s for ds in docs.values() for d in ds for s in d}), ner())
    shipped = contrastive_pairs(args.raw, args.datasets, seed=args.seed, docs=docs, ents=ents)
    build_s = time.time() - t
    raw = contrastive_pairs(args.raw, args.datasets, seed=args.seed, docs=docs, ents=ents, balanced=False)
    lines = ["# Cue-only baseline on the contrastive verifier pairs", "",
             "Command: `" + " ".join(["python", *sys.argv]) + "`", "",
             f"Build (balanced, spaCy NER, one CPU thread): {build_s:.0f} s. "
             "Cue model: logistic regression on claim length, claim/premise word overlap, position of the "
             "premise sentence nearest the claim, a digit, a negation word. 3-way balanced accuracy "
             "(chance 0.333, target <= 0.40), fitted on a source's training pairs, scored on its dev pairs "
             "(documents held apart).", "",
             "| source | train pairs | dev pairs | supported / contradicted / not mentioned (train) "
             "| cue BAcc, balanced (shipped) | cue BAcc, unbalanced (every pair made) |",
             "|---|---|---|---|---|---|"]
    sources = sorted({p["source"] for p in shipped["train"]})
    for source in sources:
        tr = [p for p in shipped["train"] if p["source"] == source]
        dv = [p for p in shipped["dev"] if p["source"] == source]
        rtr = [p for p in raw["train"] if p["source"] == source]
        rdv = [p for p in raw["dev"] if p["source"] == source]
        labels = Counter(p["label"] for p in tr)
        lines.append(f"| {source} | {len(tr)} | {len(dv)} | {labels[0]} / {labels[1]} / {labels[2]} "
                     f"| {fmt(cue_baseline(tr, dv))} | {fmt(cue_baseline(rtr, rdv))} |")
    tr, dv, rtr, rdv = shipped["train"], shipped["dev"], raw["train"], raw["dev"]
    labels = Counter(p["label"] for p in tr)
    lines.append(f"| all | {len(tr)} | {len(dv)} | {labels[0]} / {labels[1]} / {labels[2]} "
                 f"| {fmt(cue_baseline(tr, dv))} | {fmt(cue_baseline(rtr, rdv))} |")
    lines += ["", "Per kind (all sources): pairs by label in train, and the 2-way cue baseline telling "
              "the edit from its supported twin (chance 0.5; `-`: too few pairs). The not-mentioned "
              "kinds have one label; the 3-way table above covers them.", "",
              "| kind | supported | contradicted | not mentioned | twin-vs-edit cue BAcc |", "|---|---|---|---|---|"]
    for kind in sorted({p["kind"] for p in tr}):
        ktr = [p for p in tr if p["kind"] == kind]
        kdv = [p for p in dv if p["kind"] == kind]
        n = Counter(p["label"] for p in ktr)
        lines.append(f"| {kind} | {n[0]} | {n[1]} | {n[2]} | {fmt(kind_baseline(ktr, kdv))} |")
    layouts = Counter((p["layout"], p["label"]) for p in tr)
    lines += ["", "Premise layouts (train): " + ", ".join(
        f"{lay} {layouts[(lay, 0)]}/{layouts[(lay, 1)]}/{layouts[(lay, 2)]}"
        for lay in sorted({lay for lay, _ in layouts})) + " (supported / contradicted / not mentioned)."]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
