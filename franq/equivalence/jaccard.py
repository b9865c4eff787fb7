"""Jaccard word-set similarity as the graph weight (Lin et al. 2024, "Jaccard_score";
LM-Polygraph's ``compute_sim_score``): symmetric, so P(a entails b) = P(b entails a) =
|words(a) & words(b)| / |words(a) | words(b)| on lower-cased, whitespace-split words."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class JaccardJudge:
    name = "jaccard"

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        words = [set(t.lower().split()) for t in texts]
        m = np.eye(len(texts))
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                union = len(words[i] | words[j])
                m[i, j] = m[j, i] = len(words[i] & words[j]) / union if union else 0.0
        return m
