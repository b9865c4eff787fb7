"""franq's verifier: a small three-way cross-encoder (supported / contradicted / not
mentioned), the one model used wherever franq needs NLI (the ``verifier`` faithfulness
backend, the ``verifier`` equivalence judge, the answering app's ``nli`` check).

    model.py      Verifier: load once, predict(pairs) -> (n, 3), verify(claims vs passages)
    windows.py    sentence-aligned windows with overlap, never crossing passages
    aggregate.py  per-window probabilities -> one claim's P_s, P_c, P_n and evidence window
    slots.py      the slot check: typed slots of a claim aligned to the passages' sentences
    combiner.py   fuses the slot check with the verifier's three probabilities (on by default)

Trained by ``franq fit verifier`` (:mod:`franq.fit.verifier`); the shipped one lives in
``franq/data/verifier``.
"""
from franq.verifier.aggregate import DEFAULT_RULE, RULES, aggregate
from franq.verifier.model import LABELS, ClaimVerdict, Verifier, shipped_verifier_dir
from franq.verifier.windows import Window, windows

__all__ = ["DEFAULT_RULE", "LABELS", "RULES", "ClaimVerdict", "Verifier", "Window", "aggregate",
           "shipped_verifier_dir", "windows"]
