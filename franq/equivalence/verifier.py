"""franq's verifier (:mod:`franq.verifier`) as the sample-equivalence judge.

``[i, j]`` = P_supported of ``question + answer_j`` given ``question + answer_i``: the
verifier's entailment probability, the quantity LM-Polygraph takes from DeBERTa-MNLI (the
paper's judge). Semantic entropy clusters two answers together when they entail each other
both ways (bidirectional entailment, read from ``[i, j]`` and ``[j, i]``). One model serves
the faithfulness backend and this judge: the model is ``[equivalence.verifier] model``,
else ``[faithfulness.verifier] model``, else the shipped one; when that is the faithfulness
backend's model, the two share one copy of the weights (:class:`~franq.verifier.Verifier`
instances of the same files, device and dtype do).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.equivalence.base import expand, unique_pairs
from franq.settings import Setting


class VerifierJudge:
    settings = (Setting("model", str, None, "a franq verifier directory (unset: [faithfulness.verifier] model, "
                                            "else the shipped one)"),)
    """``[equivalence.verifier]``."""

    @classmethod
    def from_config(cls, config, lm=None) -> VerifierJudge:
        from franq.verifier.model import Verifier

        model = (config.settings_for("equivalence", "verifier")["model"]
                 or config.settings_for("faithfulness", "verifier")["model"])
        return cls(Verifier(model, device=config.model.device))

    def __init__(self, verifier):
        self.verifier = verifier
        self.name = f"{verifier.name}:entailment"

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        uniq, inv, pairs = unique_pairs(texts)
        m = np.eye(len(uniq))
        if pairs:
            p = self.verifier.predict([(f"{question} {uniq[a]}", f"{question} {uniq[b]}") for a, b in pairs])
            for (a, b), v in zip(pairs, np.clip(p[:, 0], 0.0, 1.0)):
                m[a, b] = v
        return expand(m, inv)
