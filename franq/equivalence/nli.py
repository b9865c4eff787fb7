"""Any NLI faithfulness backend as an equivalence judge.

A :class:`franq.faithfulness.base.FaithfulnessBackend` answers P(claim supported by
context); given ``(question + answer_a, question + answer_b)`` that is P(a entails b),
the quantity LM-Polygraph takes from DeBERTa-MNLI. Use it when an NLI model is
configured (``uq.equivalence = "nli"`` with ``[equivalence.nli] model``, or, unset, the NLI
faithfulness backend's ``[faithfulness.nli] model``: one NLI model serves both unless
told otherwise); franq ships no NLI weights, so it is not the default.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.equivalence.base import expand, unique_pairs
from franq.errors import InputError
from franq.settings import Setting


def nli_model(values, config) -> str | None:
    """The judge's NLI model: its own ``model``, else the NLI faithfulness backend's."""
    return values["model"] or config.settings_for("faithfulness", "nli")["model"]


class NLIJudge:
    settings = (Setting("model", str, None, "a local NLI model directory (unset: [faithfulness.nli] model)"),)
    """``[equivalence.nli]``."""

    @staticmethod
    def check_settings(values, config) -> None:
        """Short form samples need the model (long form never runs the judge)."""
        if config.mode != "long" and not nli_model(values, config):
            raise InputError("config 'equivalence.nli.model': required when uq.equivalence is 'nli' "
                             "(or set [faithfulness.nli] model)")

    @classmethod
    def from_config(cls, config, lm=None) -> NLIJudge:
        """``uq.equivalence = "nli"``: the NLI model of :func:`nli_model`."""
        from franq.faithfulness.nli import NLIFaithfulness

        model = nli_model(config.settings_for("equivalence", "nli"), config)
        if not model:
            raise InputError("config 'equivalence.nli.model': required when uq.equivalence is 'nli'")
        return cls(NLIFaithfulness(model, device=config.model.device))

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
