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
    key = "nli"
    """The registry name: its settings table is ``[equivalence.<key>]``."""
    settings = (Setting("model", str, None, "a local NLI model directory (unset: [faithfulness.nli] model)"),)
    """``[equivalence.nli]``."""

    @staticmethod
    def check_settings(values, config) -> None:
        """Short form samples need the model (long form never runs the judge)."""
        if config.mode != "long" and not nli_model(values, config):
            key = config.uq.equivalence
            raise InputError(f"config 'equivalence.{key}.model': required when uq.equivalence is '{key}' "
                             "(or set [faithfulness.nli] model)")

    @classmethod
    def from_config(cls, config, lm=None) -> NLIJudge:
        """``uq.equivalence = "nli"``: the NLI model of :func:`nli_model`."""
        from franq.faithfulness.nli import NLIFaithfulness

        model = nli_model(config.settings_for("equivalence", cls.key), config)
        if not model:
            raise InputError(f"config 'equivalence.{cls.key}.model': required when uq.equivalence is '{cls.key}'")
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


def nli_label_index(id2label: dict, prefix: str) -> int | None:
    """The index whose label starts with ``prefix`` (``entail``, ``contra``, ``neutral``), or None."""
    hits = [int(i) for i, label in id2label.items() if str(label).lower().startswith(prefix)]
    return hits[0] if len(hits) == 1 else None


class NLIArgmaxJudge(NLIJudge):
    """The paper's equivalence judge (``uq.equivalence = "nli_argmax"``): LM-Polygraph's
    DeBERTa-MNLI setting. Each ordered pair of distinct sampled answers is read by the
    three-way NLI model (premise = answer i, hypothesis = answer j, without the question,
    as LM-Polygraph's ``SemanticMatrixCalculator``); ``entailment`` is the softmax
    probability of the entailment label (the graph weights of the eigenvalue family), and
    i entails j when entailment is the argmax label (the semantic classes of semantic
    entropy, as LM-Polygraph's ``SemanticClassesCalculator``), not when P >= 0.5. The
    diagonal is 1 and entails (LM-Polygraph runs the model on (t, t) too; an NLI model
    that does not call a text its own paraphrase is broken). Settings as ``nli``."""

    key = "nli_argmax"

    def __init__(self, backend):
        super().__init__(backend)
        self.name = f"nli_argmax:{backend.name}"
        model = getattr(backend, "model", None)
        id2label = getattr(getattr(model, "config", None), "id2label", None) or {}
        self.entail = nli_label_index(id2label, "entail")
        if self.entail is None or len(id2label) < 2:
            raise InputError(f"equivalence 'nli_argmax': the NLI model must name one entailment label among its "
                             f"classes (config.id2label), got {dict(id2label)}")

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """``(len(pairs), labels)`` softmax probabilities of the NLI model."""
        import torch

        b = self.backend
        if not pairs:
            return np.zeros((0, len(b.model.config.id2label)))
        with torch.inference_mode():
            enc = b.tokenizer([p for p, _ in pairs], [h for _, h in pairs], padding=True, truncation=True,
                              max_length=getattr(b, "max_length", None), return_tensors="pt")
            logits = b.model(**{k: v.to(b.device) for k, v in enc.items()}).logits.float()
            return torch.softmax(logits, dim=-1).double().cpu().numpy()

    def relation(self, question: str, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(P(entail), entails)``: the entailment probabilities and the argmax decisions."""
        uniq, inv, pairs = unique_pairs(texts)
        probs = np.eye(len(uniq))
        decided = np.eye(len(uniq), dtype=bool)
        if pairs:
            p = self.probabilities([(uniq[a], uniq[b]) for a, b in pairs])
            for (a, b), row in zip(pairs, p):
                probs[a, b] = row[self.entail]
                decided[a, b] = int(np.argmax(row)) == self.entail
        return expand(probs, inv), expand(decided, inv).astype(bool)

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        return self.relation(question, texts)[0]
