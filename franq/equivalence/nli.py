"""Any NLI faithfulness backend as an equivalence judge.

A :class:`franq.faithfulness.base.FaithfulnessBackend` answers P(claim supported by
context); given ``(question + answer_a, question + answer_b)`` that is P(a entails b),
the quantity LM-Polygraph takes from DeBERTa-MNLI. Use it when an NLI model is
configured (``uq.equivalence = "nli"`` with ``faithfulness.nli_model``); this machine
ships no NLI weights, so it is not the default.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.equivalence.base import expand, unique_pairs


class NLIJudge:
    @classmethod
    def from_config(cls, config, lm=None) -> NLIJudge:
        """``uq.equivalence = "nli"``: the NLI model at ``faithfulness.nli_model``."""
        from franq.errors import InputError
        from franq.faithfulness.nli import NLIFaithfulness

        if not config.faithfulness.nli_model:
            raise InputError("config 'faithfulness.nli_model': required when uq.equivalence is 'nli'")
        return cls(NLIFaithfulness.from_config(config))

    def __init__(self, backend):
        self.backend = backend
        self.name = f"nli:{backend.name}"

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        uniq, inv, pairs = unique_pairs(texts)
        m = np.eye(len(uniq))
        if pairs:
            p = np.asarray(self.backend.predict(
                [(f"{question} {uniq[a]}", f"{question} {uniq[b]}") for a, b in pairs]), dtype=np.float64)
            for (a, b), v in zip(pairs, np.clip(p, 0.0, 1.0)):
                m[a, b] = v
        return expand(m, inv)
