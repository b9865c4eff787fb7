"""Equivalence judges on labelled answer pairs built from nq-open-oracle gold answers.

For each question (seeded sample) with gold answer ``a`` (and alias ``a2`` if any) and
the gold answer ``b`` of another question:
  equivalent:     (a, "The answer is a."), (a, a2)
  not equivalent: (a, b), ("The answer is a.", "The answer is b.")
A judge decides "equivalent" when P(entails) >= 0.5 both ways (as the semantic classes
do); the table gives decision accuracy, AUROC of min(P(a|b), P(b|a)), and time per pair.

    franq bench judges --questions 30
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from franq.evaluation.short_cost import load_questions


def pairs_for(questions: list[dict]) -> list[tuple[str, str, str, bool]]:
    out = []
    for k, q in enumerate(questions):
        a = q["answers"][0]
        b = questions[(k + 1) % len(questions)]["answers"][0]
        out += [(q["question"], a, f"The answer is {a}.", True),
                (q["question"], a, b, False),
                (q["question"], f"The answer is {a}.", f"The answer is {b}.", False)]
        if len(q["answers"]) > 1 and q["answers"][1].lower() != a.lower():
            out.append((q["question"], a, q["answers"][1], True))
    return out


def run(*, questions: int = 30, seed: int = 1, model: str | None = None, raw: str | Path | None = None) -> None:
    """Print the table."""
    from franq.equivalence.lm_judge import LMJudge
    from franq.equivalence.normalized import NormalizedAnswerJudge
    from franq.evaluation.metrics import auroc
    from franq.lm import CausalLM

    pairs = pairs_for(load_questions(questions, seed, raw))
    labels = np.array([p[3] for p in pairs])
    judges = [NormalizedAnswerJudge(), LMJudge(CausalLM.load(model))]
    print(f"{len(pairs)} pairs ({labels.sum()} equivalent) from {questions} questions\n")
    print("| judge | accuracy | AUROC | ms per pair |")
    print("|---|---|---|---|")
    for judge in judges:
        t = time.perf_counter()
        m = [judge.entailment(q, [x, y]) for q, x, y, _ in pairs]
        ms = 1000 * (time.perf_counter() - t) / len(pairs)
        score = np.array([min(e[0, 1], e[1, 0]) for e in m])
        acc = float(np.mean((score >= 0.5) == labels))
        print(f"| {judge.name} | {acc:.3f} | {auroc(score, labels):.3f} | {ms:.1f} |", flush=True)

