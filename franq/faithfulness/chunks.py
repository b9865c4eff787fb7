"""Chunked (premise, hypothesis) scoring shared by the encoder backends (AlignScore, NLI).

Long contexts are chunked, never silently truncated: the context is split at sentence
boundaries into chunks of about ``max_words`` words (AlignScore's 350 by default), and a
chunk that still does not fit the encoder next to its hypothesis is halved until it does.
All (chunk, hypothesis) pairs of all claims of a call are de-duplicated, sorted by length
and scored in dynamically padded batches; the per-claim score is the max over chunks and
(when the claim is split into sentences, AlignScore's "nli_sp") the mean over sentences.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

from claims.decompose import split_sentences

log = logging.getLogger(__name__)

CHUNK_WORDS = 350
PAIR_OVERHEAD = 4  # <s> A </s></s> B </s>


def chunk_context(text: str, *, max_words: int = CHUNK_WORDS) -> list[str]:
    """Split ``text`` into consecutive chunks of at most about ``max_words`` words, cutting
    at sentence boundaries; a single sentence longer than that is cut between words."""
    chunks: list[str] = []
    current: list[str] = []
    n = 0
    for s, e in split_sentences(text):
        words = text[s:e].split()
        if n and n + len(words) > max_words:
            chunks.append(" ".join(current))
            current, n = [], 0
        while len(words) > max_words:
            chunks.append(" ".join(words[:max_words]))
            words = words[max_words:]
        current.extend(words)
        n += len(words)
    if current:
        chunks.append(" ".join(current))
    return chunks or [text.strip()]


def claim_sentences(claim: str) -> list[str]:
    """The claim's sentences (the claim itself when the splitter finds none)."""
    sents = [claim[s:e] for s, e in split_sentences(claim)]
    return sents or [claim.strip()]


class ChunkedPairScorer:
    """Scores ``(context, claim)`` pairs with a sentence-pair encoder.

    ``forward(premises, hypotheses) -> np.ndarray`` returns P(supported) for one padded
    batch; this class owns chunking, fitting into ``max_length`` tokens, de-duplication,
    length-sorted batching (at most ``max_batch_tokens`` padded tokens) and aggregation.
    """

    def __init__(self, tokenizer, forward: Callable[[list[str], list[str]], np.ndarray], *,
                 max_length: int, max_batch_tokens: int = 8192, chunk_words: int = CHUNK_WORDS,
                 split_claim: bool = True):
        self.tokenizer = tokenizer
        self.forward = forward
        self.max_length = max_length
        self.max_batch_tokens = max_batch_tokens
        self.chunk_words = chunk_words
        self.split_claim = split_claim

    def _n_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _fit(self, chunk: str, hyp_len: int) -> list[str]:
        """``chunk`` halved (between words) until each piece fits next to the hypothesis."""
        if self._n_tokens(chunk) + hyp_len + PAIR_OVERHEAD <= self.max_length:
            return [chunk]
        words = chunk.split()
        if len(words) <= 1:
            raise ValueError(f"context: a single word of {self._n_tokens(chunk)} tokens does not fit "
                             f"the encoder's {self.max_length} tokens next to the claim")
        half = len(words) // 2
        return self._fit(" ".join(words[:half]), hyp_len) + self._fit(" ".join(words[half:]), hyp_len)

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        chunk_cache: dict[str, list[str]] = {}
        fit_cache: dict[tuple[str, int], list[str]] = {}
        index: dict[tuple[str, str], int] = {}
        # cells[k] = for each hypothesis of pair k, the list of unique-pair indices
        cells: list[list[list[int]]] = []
        for context, claim in pairs:
            if context not in chunk_cache:
                chunk_cache[context] = chunk_context(context, max_words=self.chunk_words)
            hyps = claim_sentences(claim) if self.split_claim else [claim.strip()]
            per_pair = []
            for hyp in hyps:
                hyp_len = self._n_tokens(hyp)
                if hyp_len + PAIR_OVERHEAD + 1 > self.max_length:
                    log.warning("claim sentence of %d tokens exceeds the encoder's %d; it is cut",
                                hyp_len, self.max_length)
                    hyp = self.tokenizer.decode(self.tokenizer(hyp, add_special_tokens=False)["input_ids"]
                                                [: self.max_length // 2])
                    hyp_len = self._n_tokens(hyp)
                ids = []
                for chunk in chunk_cache[context]:
                    key = (chunk, hyp_len)
                    if key not in fit_cache:
                        fit_cache[key] = self._fit(chunk, hyp_len)
                    for piece in fit_cache[key]:
                        ids.append(index.setdefault((piece, hyp), len(index)))
                per_pair.append(ids)
            cells.append(per_pair)
        scores = self._score_unique(list(index))
        return np.array([float(np.mean([scores[ids].max() for ids in per_pair])) for per_pair in cells],
                        dtype=np.float64)

    def _score_unique(self, items: list[tuple[str, str]]) -> np.ndarray:
        out = np.zeros(len(items), dtype=np.float64)
        lengths = [len(p) + len(h) for p, h in items]  # characters: a cheap proxy for sorting
        order = sorted(range(len(items)), key=lambda i: -lengths[i])
        start = 0
        while start < len(order):
            width = self._n_tokens(items[order[start]][0]) + self._n_tokens(items[order[start]][1]) + PAIR_OVERHEAD
            size = max(1, self.max_batch_tokens // max(width, 1))
            batch = order[start:start + size]
            out[batch] = self.forward([items[i][0] for i in batch], [items[i][1] for i in batch])
            start += size
        return out
