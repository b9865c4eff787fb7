"""Claims: split an answer into claims and tie each claim to the answer tokens it came from.

    decompose.py   answer -> list[Claim]      (offline sentence splitter; Decomposer protocol)
    align.py       Claim -> char spans -> answer token positions
"""
from claims.align import align_claims, locate_claim
from claims.decompose import Decomposer, SentenceDecomposer
from claims.types import Claim

__all__ = ["Claim", "Decomposer", "SentenceDecomposer", "align_claims", "locate_claim"]
