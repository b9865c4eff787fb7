"""Claim-level uncertainty scorers, one file per method (the protocol is in
:mod:`franq.scorers.base`). Each declares its raw signals and their direction, and maps
its primary signal to a probability, higher = more likely true.

    passes   claim_prob (p(c|x,r), long-form UQ_faith), parametric (p(c|x), UQ_unfaith)
    internals rauq (unsupervised, attention on the previous token), truth_probe (hidden-state
             probe fitted by `franq fit probe`), se_probe / se_probe_closed (semantic entropy
             probes: short-form confidence without samples, the ``probe`` preset)
    samples  semantic_entropy (short-form UQ_faith), eigval (UQ_unfaith), degree_matrix,
             eccentricity, lexical_similarity
"""
from franq.scorers.base import Scorer, Signal

__all__ = ["Scorer", "Signal"]
