"""Faithfulness backends, one file per backend: P(claim is supported by the passages).

    lexical      LexicalFaithfulness      weighted word overlap (foundation)
    combined     CombinedFaithfulness     logistic regression over offline signals (default)
    context_pmi  ContextPMIFaithfulness   passages' effect on the claim's token log-probs
    alignscore   AlignScoreFaithfulness   published AlignScore checkpoints (paper's choice)
    nli          NLIFaithfulness          any local sequence-classification NLI model
    judge        LMJudgeFaithfulness / OpenAIJudgeFaithfulness   P(yes) of a chat model

Backends that load torch models are imported on first use.
"""
from franq.faithfulness.base import FaithfulnessBackend, NeedsPassesError, PassAwareFaithfulness, predict_faithfulness
from franq.faithfulness.lexical import LexicalFaithfulness

_LAZY = {
    "AlignScoreFaithfulness": "franq.faithfulness.alignscore",
    "CombinedFaithfulness": "franq.faithfulness.combined",
    "ContextPMIFaithfulness": "franq.faithfulness.context_pmi",
    "LMJudgeFaithfulness": "franq.faithfulness.judge",
    "NLIFaithfulness": "franq.faithfulness.nli",
    "OpenAIJudgeFaithfulness": "franq.faithfulness.judge",
}

__all__ = ["FaithfulnessBackend", "LexicalFaithfulness", "NeedsPassesError", "PassAwareFaithfulness",
           "predict_faithfulness", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'franq.faithfulness' has no attribute {name!r}")
