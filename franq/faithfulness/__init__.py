"""Faithfulness backends, one file per backend: P(claim is supported by the passages).

    lexical      LexicalFaithfulness      weighted word overlap (foundation)
    combined     CombinedFaithfulness     logistic regression over offline signals (default)
    context_pmi  ContextPMIFaithfulness   passages' effect on the claim's token log-probs
    lookback     LookbackFaithfulness     Lookback Lens: attention ratios of the pass, fitted probe
    hidden_probe HiddenProbeFaithfulness  hidden states of the pass, fitted probe
    alignscore   AlignScoreFaithfulness   published AlignScore checkpoints (paper's choice)
    nli          NLIFaithfulness          any local sequence-classification NLI model
    judge        judge_faithfulness -> LMJudgeFaithfulness / OpenAIJudgeFaithfulness: P(yes) of a chat model
    minicheck    MiniCheckFaithfulness    published MiniCheck (flan-t5 / roberta / deberta), its own inference
    hhem         HHEMFaithfulness         published HHEM-2.1-Open, its own inference (no remote code)
    factcg       FactCGFaithfulness       published FactCG-DeBERTa-v3-Large, its own inference

Each is registered by name in :mod:`franq.registry` and imported on first use; import a
class from its module (``from franq.faithfulness.nli import NLIFaithfulness``).
"""
from franq.faithfulness.base import FaithfulnessBackend, NeedsPassesError, predict_faithfulness

__all__ = ["FaithfulnessBackend", "NeedsPassesError", "predict_faithfulness"]
