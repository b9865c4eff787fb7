"""Claim-level uncertainty scorers, one file per method. Every scorer returns
"higher = more likely true"; methods that measure uncertainty convert at the boundary."""
from franq.scorers.base import ClaimContext, ClaimScorer
from franq.scorers.claim_prob import MaxClaimProbabilityScorer
from franq.scorers.degree_matrix import DegreeMatrixScorer
from franq.scorers.eccentricity import EccentricityScorer
from franq.scorers.eigval import SumEigenvaluesScorer
from franq.scorers.lexical_similarity import LexicalSimilarityScorer
from franq.scorers.parametric import ParametricKnowledgeScorer
from franq.scorers.samples import SampleContext, SampleScorer
from franq.scorers.semantic_entropy import SemanticEntropyScorer

__all__ = ["ClaimContext", "ClaimScorer", "DegreeMatrixScorer", "EccentricityScorer", "LexicalSimilarityScorer",
           "MaxClaimProbabilityScorer", "ParametricKnowledgeScorer", "SampleContext", "SampleScorer",
           "SemanticEntropyScorer", "SumEigenvaluesScorer"]
