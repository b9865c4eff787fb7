"""Faithfulness backends, one file per backend: P(claim is supported by the passages)."""
from franq.faithfulness.base import FaithfulnessBackend
from franq.faithfulness.lexical import LexicalFaithfulness

__all__ = ["FaithfulnessBackend", "LexicalFaithfulness"]
