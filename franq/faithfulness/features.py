"""Offline faithfulness signals, by name, for the context-PMI and combined backends.

Text features (need only the context and the claim):
    lexical            LexicalFaithfulness (weighted recall in the best window)
    recall             share of the claim's content words found anywhere in the context
    bigram_recall      share of the claim's consecutive content-word pairs found as pairs
    number_recall      share of the claim's numbers found in the context (1 when none)
    name_recall        share of the claim's capitalized words found (1 when none)
    log_claim_words    log(1 + number of content words of the claim)
    log_context_words  log(1 + number of words of the context)
Pass features (need the claim's token log-probabilities with and without the passages,
which FRANQ computes anyway, paper eq. 1 and 3):
    pmi_mean           mean over the claim's tokens of log p(y_t|x,r,y<t) - log p(y_t|x,y<t)
    rag_mean           mean token log-probability with the passages
    closed_mean        mean token log-probability without them
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from claims.text import NUMBER_RE, is_content_word, iter_words, normalize_word
from franq.faithfulness.lexical import LexicalFaithfulness

TEXT_FEATURES = ("lexical", "recall", "bigram_recall", "number_recall", "name_recall",
                 "log_claim_words", "log_context_words")
PASS_FEATURES = ("pmi_mean", "rag_mean", "closed_mean")


def pass_features(ctx) -> dict[str, float]:
    """Pass features of one :class:`~franq.stages.record.ClaimEvidence`."""
    pos = list(ctx.claim.token_positions)
    if not pos:
        raise ValueError(f"claim {ctx.claim.text!r} has no aligned tokens")
    return pass_features_from_sums(float(np.sum(ctx.rag_logprobs[pos])),
                                   float(np.sum(ctx.closed_logprobs[pos])), len(pos))


def pass_features_from_sums(log_rag: float, log_closed: float, n_tokens: float) -> dict[str, float]:
    """The same features from summed claim log-probabilities (as ``franq score`` writes
    them in ``components``: ``log_claim_prob``, ``log_parametric``, ``n_tokens``)."""
    n = max(float(n_tokens), 1.0)
    return {"pmi_mean": (log_rag - log_closed) / n, "rag_mean": log_rag / n, "closed_mean": log_closed / n}


class _ContextIndex:
    def __init__(self, context: str):
        words = [(w, normalize_word(w)) for w, _, _ in iter_words(context)]
        self.n_words = len(words)
        self.words = {n for _, n in words}
        content = [n for w, n in words if is_content_word(w)]
        self.bigrams = set(zip(content, content[1:]))


def _share(found: Sequence[bool]) -> float:
    return float(np.mean(found)) if len(found) else 1.0


def text_features(pairs: Sequence[tuple[str, str]], *, names: Sequence[str] = TEXT_FEATURES) -> np.ndarray:
    """Matrix ``(len(pairs), len(names))`` of the named text features."""
    index: dict[str, _ContextIndex] = {}
    lexical = LexicalFaithfulness().predict(pairs) if "lexical" in names else None
    rows = []
    for k, (context, claim) in enumerate(pairs):
        if context not in index:
            index[context] = _ContextIndex(context)
        ci = index[context]
        words = [(i, w, normalize_word(w)) for i, (w, _, _) in enumerate(iter_words(claim)) if is_content_word(w)]
        keys = [n for _, _, n in words]
        values = {
            "lexical": lexical[k] if lexical is not None else 0.0,
            "recall": _share([n in ci.words for n in set(keys)]) if keys else 0.0,
            "bigram_recall": _share([b in ci.bigrams for b in set(zip(keys, keys[1:]))]),
            "number_recall": _share([n in ci.words for _, w, n in words if NUMBER_RE.match(w)]),
            "name_recall": _share([n in ci.words for i, w, n in words if i > 0 and w[0].isupper()]),
            "log_claim_words": math.log1p(len(keys)),
            "log_context_words": math.log1p(ci.n_words),
        }
        rows.append([values[n] for n in names])
    return np.array(rows, dtype=np.float64).reshape(len(pairs), len(names))


def feature_matrix(names: Sequence[str], pairs: Sequence[tuple[str, str]],
                   passes: Sequence[dict[str, float]] | None) -> np.ndarray:
    """All named features, text ones computed here, pass ones taken from ``passes``."""
    unknown = [n for n in names if n not in TEXT_FEATURES + PASS_FEATURES]
    if unknown:
        raise ValueError(f"unknown feature name(s) {unknown}; known: {list(TEXT_FEATURES + PASS_FEATURES)}")
    text_names = [n for n in names if n in TEXT_FEATURES]
    text = text_features(pairs, names=text_names) if text_names else np.zeros((len(pairs), 0))
    cols = []
    for n in names:
        if n in TEXT_FEATURES:
            cols.append(text[:, text_names.index(n)])
        else:
            if passes is None:
                raise ValueError(f"feature {n!r} needs the LM passes with and without passages")
            cols.append(np.array([p[n] for p in passes], dtype=np.float64))
    return np.stack(cols, axis=1) if cols else np.zeros((len(pairs), 0))
