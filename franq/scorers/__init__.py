"""Claim-level uncertainty scorers, one file per method. Every scorer returns
"higher = more likely true"; methods that measure uncertainty convert at the boundary."""
from franq.scorers.base import ClaimContext, ClaimScorer
from franq.scorers.claim_prob import MaxClaimProbabilityScorer
from franq.scorers.parametric import ParametricKnowledgeScorer

__all__ = ["ClaimContext", "ClaimScorer", "MaxClaimProbabilityScorer", "ParametricKnowledgeScorer"]
