"""Equivalence judges for sample-diversity scorers, one file per judge: P(a entails b)
for every ordered pair of sampled answers."""
from franq.judges.base import EquivalenceJudge
from franq.judges.jaccard import JaccardJudge
from franq.judges.lm_judge import LMJudge
from franq.judges.nli import NLIJudge
from franq.judges.normalized import NormalizedAnswerJudge

__all__ = ["EquivalenceJudge", "JaccardJudge", "LMJudge", "NLIJudge", "NormalizedAnswerJudge"]
