"""Equivalence judges for sample-diversity scorers, one file per judge: P(a entails b)
for every ordered pair of sampled answers."""
from franq.equivalence.base import EquivalenceJudge
from franq.equivalence.jaccard import JaccardJudge
from franq.equivalence.lm_judge import LMJudge
from franq.equivalence.nli import NLIArgmaxJudge, NLIJudge
from franq.equivalence.normalized import NormalizedAnswerJudge

__all__ = ["EquivalenceJudge", "JaccardJudge", "LMJudge", "NLIArgmaxJudge", "NLIJudge", "NormalizedAnswerJudge"]
