"""Hard substitutes for the verifier's contradicted pairs: a same-type entity or answer that
the base sentence encoder (all-MiniLM-L6-v2) places near the original ("Canberra" ->
"Sydney", "Jane Austen" -> "Charles Dickens") rather than one drawn at random ("Canberra"
-> "Tokyo").

Why: verifier v5 called "The capital of Australia is Sydney" supported against "Canberra is
the capital city of Australia" (P_s .89) and "... is Paris" contradicted (P_c .83). A
cross-encoder started from a sentence encoder inherits its sense of what is alike; random
same-type substitutes are far in that space and teach only the easy case. Measured
(experiments/2026-11-24-verifier-near-substitutes-v6/verifier-candidates-v6.md): two candidates trained with it still call
the Sydney claim supported (.89), so it is off in the shipped recipe (manifest-v5.json).

Aliases are never chosen: a candidate must be below ``max_similarity`` (cosine; "USA" and
"United States" are .89) and share no word with the original ("Obama" / "Barack Obama").
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

import numpy as np

WORD_RE = re.compile(r"[a-z0-9]+")
STOP = {"the", "a", "an", "of", "and", "in", "on", "at", "de", "la", "le"}


def _words(text: str) -> set[str]:
    return set(WORD_RE.findall(text.lower())) - STOP


def minilm_encoder(path: str | None = None) -> Callable[[Sequence[str]], np.ndarray]:
    """Normalised all-MiniLM-L6-v2 embeddings (CPU), the packaged sentence encoder the
    verifier starts from."""
    from sentence_transformers import SentenceTransformer

    from franq.lm.resources import minilm_path

    model = SentenceTransformer(str(minilm_path(path)), device="cpu")
    return lambda texts: np.asarray(model.encode(list(texts), batch_size=128, normalize_embeddings=True,
                                                 show_progress_bar=False), dtype=np.float32)


class NearestPool:
    """Groups of strings (one per entity type or answer type) and, for a string, a random
    one of its ``k`` nearest others in the group that is no alias of it."""

    def __init__(self, embed: Callable[[Sequence[str]], np.ndarray], *, k: int = 10,
                 max_similarity: float = 0.85):
        self.embed, self.k, self.max_similarity = embed, k, max_similarity
        self._strings: dict[str, list[str]] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._index: dict[str, dict[str, int]] = {}

    def __contains__(self, group: str) -> bool:
        return group in self._strings

    def add(self, group: str, strings: Sequence[str]) -> None:
        """Set the strings of ``group`` (duplicates kept once, in first-seen order)."""
        unique = list(dict.fromkeys(s for s in strings if s.strip()))
        self._strings[group] = unique
        self._vectors[group] = self.embed(unique) if unique else np.zeros((0, 1), dtype=np.float32)
        self._index[group] = {s: i for i, s in enumerate(unique)}

    def nearest(self, group: str, text: str, rng: random.Random, ok: Callable[[str], bool] = lambda s: True
                ) -> str | None:
        """A random one of the ``k`` strings of ``group`` nearest to ``text`` that share no
        word with it, are below ``max_similarity`` and pass ``ok``; None if there is none."""
        strings = self._strings.get(group)
        if not strings:
            return None
        i = self._index[group].get(text)
        q = self._vectors[group][i] if i is not None else self.embed([text])[0]
        sims = self._vectors[group] @ q
        own = _words(text)
        picked: list[str] = []
        for j in np.argsort(-sims, kind="stable"):
            s = strings[j]
            if sims[j] >= self.max_similarity or s.lower() == text.lower() or own & _words(s) or not ok(s):
                continue
            picked.append(s)
            if len(picked) == self.k:
                break
        return rng.choice(picked) if picked else None
