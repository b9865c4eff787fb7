"""Claims: split an answer into claims and tie each claim to the answer tokens it came from.

    decompose.py       answer -> list[Claim]      (offline sentence splitter; Decomposer protocol)
    llm_decompose.py   answer -> atomic claims from a chat model (lenient parsing, fallback)
    chat.py            chat backends: any OpenAI-compatible server
    atomic.py          answer -> atomic claims from a dependency parse (lists.py: which lists state each item;
                       pronouns.py: "it" read as its antecedent when safe)
    checkworthy.py     greetings, refusals, headings, bare labels, restated questions: kept, not scored
    align.py           Claim -> char spans -> answer token positions
    llm_align.py       optional: the chat model lists the words that express a claim
"""
from claims.align import align_claims, locate_claim
from claims.chat import ChatReply, OpenAIChat
from claims.decompose import Decomposer, SentenceDecomposer, decompose_all
from claims.llm_decompose import LLMDecomposer
from claims.types import Claim, Decomposition, DecompositionUsage

__all__ = ["ChatReply", "Claim", "Decomposer", "Decomposition", "DecompositionUsage", "LLMDecomposer",
           "OpenAIChat", "SentenceDecomposer", "align_claims", "decompose_all", "locate_claim"]
