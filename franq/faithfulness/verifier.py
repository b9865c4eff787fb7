"""The verifier as the faithfulness backend: P_faithful = P_supported of franq's own
three-way cross-encoder (:mod:`franq.verifier`), read over sentence-aligned windows of
every passage; it also gives P_contradicted and P_not_mentioned and the evidence window
(:meth:`VerifierFaithfulness.predict_conditions`), which three-condition FRANQ mixes and
the report shows. Higher = more likely supported.

``[faithfulness.verifier]``: ``model`` (a verifier directory; unset: the shipped one in
franq/data/verifier), ``aggregation`` (the window rule, :mod:`franq.verifier.aggregate`;
unset: the model card's), ``window_words`` (unset: the card's), ``batch_tokens`` (padded
tokens per batch), ``device`` (unset: the model's device), ``slot_check`` (fuse the
verifier's three probabilities with the typed-slot check of :mod:`franq.verifier.slots`
through the combiner fitted for this verifier, :mod:`franq.verifier.combiner`; the stack's
name then ends in ``:slots``; unset: on when the verifier's directory holds a combiner fitted
for it, as the shipped one does; ``false``: off; ``true``: required),
``slot_combiner`` (the combiner file; unset: slot-combiner.json in the verifier directory) and
``top_windows`` (read only the ``k`` windows of each claim sharing the most content words
with it: the ``fast`` preset reads :data:`franq.presets.FAST_TOP_WINDOWS`; the name then ends
in ``:top<k>``).
"""
from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from franq.faithfulness.base import Conditions
from franq.settings import Setting
from franq.verifier.aggregate import RULES
from franq.verifier.combiner import combiner_for, recheck


class VerifierFaithfulness:
    """P(supported) from franq's verifier, with P(contradicted) and P(not mentioned)."""

    needs = frozenset()
    settings = (
        Setting("model", str, None, "a franq verifier directory (unset: the shipped franq/data/verifier)"),
        Setting("aggregation", str, None, f"how windows combine per claim: one of {sorted(RULES)} (unset: the card's)"),
        Setting("window_words", int, None, "words per passage window (unset: the model card's)"),
        Setting("titles", bool, False, "put each passage's title in front of its windows (the shipped verifier "
                                       "was trained without)"),
        Setting("batch_tokens", int, 8192, "padded tokens per forward batch (bounds memory)"),
        Setting("device", str, None, "cpu, cuda, ... (unset: the model's device)"),
        Setting("slot_check", bool, None, "fuse the verifier with the typed-slot check (numbers, dates, names, "
                                          "negation) through the combiner fitted for this verifier (unset: on "
                                          "when the verifier's directory holds one, as the shipped one does)"),
        Setting("slot_combiner", str, None, "the slot-check combiner file (unset: slot-combiner.json in the "
                                            "verifier directory)"),
        Setting("top_windows", int, None, "read only the k windows of each claim sharing the most content words "
                                          "with it (unset: every window; the fast preset: 1)"),
    )

    @classmethod
    def from_config(cls, config, lm=None) -> VerifierFaithfulness:
        s = config.settings_for("faithfulness", "verifier")
        return cls(s["model"], aggregation=s["aggregation"], window_words=s["window_words"],
                   max_batch_tokens=s["batch_tokens"], device=s["device"] or config.model.device,
                   titles=s["titles"], slot_check=s["slot_check"], slot_combiner=s["slot_combiner"],
                   top_windows=s["top_windows"])

    def __init__(self, model=None, *, aggregation: str | None = None, window_words: int | None = None,
                 max_batch_tokens: int = 8192, device: str | None = None, verifier=None, titles: bool = False,
                 slot_check: bool | None = None, slot_combiner: str | None = None, top_windows: int | None = None):
        from franq.verifier.model import Verifier

        self.verifier = verifier if verifier is not None else Verifier(
            model, device=device, max_batch_tokens=max_batch_tokens, window_words=window_words,
            aggregation=aggregation, top_windows=top_windows)
        v = self.verifier
        self.titles = bool(titles)
        self.slots = combiner_for(v, slot_check, slot_combiner)
        self.name = (f"{v.name}:{v.aggregation}" + (f":w{v.window_words}" if window_words else "")
                     + (":titles" if self.titles else "") + (self.slots.suffix if self.slots else "")
                     + (f":top{v.top_windows}" if v.top_windows else ""))

    def with_top_windows(self, k: int) -> VerifierFaithfulness:
        """This backend reading only each claim's ``k`` closest windows (the same loaded
        model); itself when it already reads a chosen number."""
        if self.verifier.top_windows is not None:
            return self
        out = copy.copy(self)
        out.verifier = copy.copy(self.verifier)
        out.verifier.top_windows = k
        out.name = f"{self.name}:top{k}"
        return out

    def predict_conditions(self, pairs: Sequence[tuple[str, str]], evidence: Sequence | None = None) -> Conditions:
        """P(supported / contradicted / not mentioned) of each claim, read over windows of each
        of its passages (``evidence[k].passages``: windows never cross passages); on text
        alone (``evidence=None``), each context is one passage."""
        if evidence is not None:
            items = [([p.text for p in e.passages], e.statement) for e in evidence]
            titles = [[p.title for p in e.passages] for e in evidence]
        else:
            items = [([context], statement) for context, statement in pairs]
            titles = [[""] for _ in pairs]
        verdicts = self.verifier.verify(items, titles=titles if self.titles else None)
        p3 = np.array([[v.p_supported, v.p_contradicted, v.p_not_mentioned] for v in verdicts],
                      dtype=np.float64).reshape(-1, 3)
        if self.slots is not None:
            p3 = recheck(self.slots, p3, items)
        return Conditions(p3[:, 0], p3[:, 1], p3[:, 2], tuple(v.evidence for v in verdicts))

    def predict(self, pairs: Sequence[tuple[str, str]], evidence: Sequence | None = None) -> np.ndarray:
        """P(supported) for each ``(context, claim)``."""
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        return self.predict_conditions(pairs, evidence).p_supported
