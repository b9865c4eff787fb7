"""franq: claim-level factuality of RAG answers with FRANQ (the scoring library).

    >>> import franq
    >>> result = franq.score(question, passages, answer)
    >>> for c in result.scored: print(c.p_true_calibrated, c.p_true_raw, c.claim.text)

``franq.Franq.from_config(franq.FranqConfig(...))`` builds other pipelines; ``read_results``
reads ``franq score`` output back into :class:`AnswerScore` objects. Fitting (``franq.fit``),
evaluation (``franq.evaluation``) and the applications (``franq.apps``: report, serve,
answering, trust) are built on this API; docs/architecture.md shows the rooms.

Heavy modules (torch, transformers) load on first use of ``score``, ``Franq`` or
``CausalLM``, so ``import franq`` stays fast.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from claims.types import Claim
from franq.config import FranqConfig
from franq.errors import ContextOverflowError, FranqError, InputError, ModelNotFoundError
from franq.io import Example
from franq.types import AnswerScore, CalibratorInfo, ClaimScore, Decision, KnowledgeTerm, Passage, WeakestClaim
from franq.verdicts import claim_p_true, with_verdicts

if TYPE_CHECKING:
    from franq.lm import CausalLM
    from franq.pipeline import Franq, score
    from franq.results import read_results, result_record

__version__ = "0.2.0"
__all__ = [
    "AnswerScore", "CalibratorInfo", "CausalLM", "Claim", "ClaimScore", "ContextOverflowError", "Decision", "Example",
    "Franq", "FranqConfig", "FranqError", "InputError", "KnowledgeTerm", "ModelNotFoundError", "Passage", "WeakestClaim",
    "claim_p_true", "read_results", "result_record", "score", "with_verdicts",
]
_LAZY = {"Franq": ("franq.pipeline", "Franq"), "score": ("franq.pipeline", "score"),
         "CausalLM": ("franq.lm", "CausalLM"),
         "result_record": ("franq.results", "result_record"),  # one output line of `franq score`
         "read_results": ("franq.results", "read_results")}   # output lines -> AnswerScore


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'franq' has no attribute {name!r}")
