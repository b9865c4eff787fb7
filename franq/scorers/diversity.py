"""What a sample-diversity scorer sees: N answers sampled for one question, their
log-likelihoods, and a pairwise entailment matrix from an equivalence judge.

Scorers of this family (semantic entropy, sum of eigenvalues, degree matrix,
eccentricity, lexical similarity) follow LM-Polygraph's definitions: each computes
``uncertainty`` (their convention: higher = more uncertain) and declares its signal as
``u_<name>`` with ``higher_is_true=False``; ``probability`` converts to franq's
convention (higher = more likely true) at that boundary.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EQUIVALENCE_THRESHOLD = 0.5


@dataclass(frozen=True)
class SampleContext:
    """``entailment[i, j]`` is P(texts[i] entails texts[j]) in [0, 1] (diagonal 1).
    ``equivalent[i, j]`` is bidirectional entailment: both directions >= 0.5.

    ``lengths`` (optional): each sample's number of tokens, for length-normalized
    likelihoods. Observer mode (optional): ``answer_entailment``, shape ``(2, n)``, row 0
    P(answer entails texts[i]), row 1 P(texts[i] entails answer), from the same judge;
    ``answer_logprobs`` / ``answer_closed_logprobs``, the scored answer's token
    log-probabilities under the sampling prompt (with the passages) and without them;
    ``answer``, its text.

    ``entails`` / ``answer_entails`` (optional, same shapes as ``entailment`` /
    ``answer_entailment``): the judge's own decision that one text entails the other, for a
    judge that decides by something other than ``P >= 0.5`` (the NLI argmax of
    LM-Polygraph and the paper, :class:`~franq.equivalence.nli.NLIArgmaxJudge`); unset, a
    pair entails when its probability is >= 0.5. Graph scorers always read the
    probabilities (:meth:`similarity`), as LM-Polygraph does.
    """

    texts: tuple[str, ...]
    logprobs: np.ndarray
    entailment: np.ndarray
    lengths: np.ndarray | None = None
    answer_entailment: np.ndarray | None = None
    answer_logprobs: np.ndarray | None = None
    answer_closed_logprobs: np.ndarray | None = None
    answer: str | None = None
    entails: np.ndarray | None = None
    answer_entails: np.ndarray | None = None

    def __post_init__(self):
        n = len(self.texts)
        if n < 1:
            raise ValueError("texts: at least one sample is needed")
        if np.shape(self.logprobs) != (n,):
            raise ValueError(f"logprobs: expected shape ({n},), got {np.shape(self.logprobs)}")
        if np.shape(self.entailment) != (n, n):
            raise ValueError(f"entailment: expected shape ({n}, {n}), got {np.shape(self.entailment)}")
        if self.lengths is not None and np.shape(self.lengths) != (n,):
            raise ValueError(f"lengths: expected shape ({n},), got {np.shape(self.lengths)}")
        if self.answer_entailment is not None and np.shape(self.answer_entailment) != (2, n):
            raise ValueError(f"answer_entailment: expected shape (2, {n}), got {np.shape(self.answer_entailment)}")
        if self.entails is not None and np.shape(self.entails) != (n, n):
            raise ValueError(f"entails: expected shape ({n}, {n}), got {np.shape(self.entails)}")
        if self.answer_entails is not None and np.shape(self.answer_entails) != (2, n):
            raise ValueError(f"answer_entails: expected shape (2, {n}), got {np.shape(self.answer_entails)}")

    def answer_relation(self) -> np.ndarray:
        """``answer_entailment``, or a clear error for a scorer that needs it without it."""
        if self.answer_entailment is None:
            raise ValueError("these samples carry no entailment with the scored answer; an answer-dependent "
                             "scorer needs the 'answer_samples' evidence (the short preset in observer mode)")
        return np.asarray(self.answer_entailment, dtype=np.float64)

    def with_answer(self) -> SampleContext | None:
        """The samples plus the scored answer as their last member (with its own likelihood
        under the sampling prompt; a sample with the same text is the same response), or
        ``None`` when the answer's likelihood was not computed."""
        if self.answer_logprobs is None or not len(self.answer_logprobs):
            return None
        rel = self.answer_relation()
        n = len(self.texts)
        e = np.ones((n + 1, n + 1))
        e[:n, :n], e[n, :n], e[:n, n] = self.entailment, rel[0], rel[1]
        decided = None
        if self.entails is not None or self.answer_entails is not None:
            own, with_answer = self._entails(), self._answer_entails()
            decided = np.ones((n + 1, n + 1), dtype=bool)
            decided[:n, :n], decided[n, :n], decided[:n, n] = own, with_answer[0], with_answer[1]
        lengths = None if self.lengths is None else np.append(self.lengths, len(self.answer_logprobs))
        return SampleContext((*self.texts, self.answer or ""), np.append(self.logprobs, np.sum(self.answer_logprobs)),
                             e, lengths, entails=decided)

    def _entails(self) -> np.ndarray:
        if self.entails is not None:
            return np.asarray(self.entails, dtype=bool)
        return np.asarray(self.entailment) >= EQUIVALENCE_THRESHOLD

    def _answer_entails(self) -> np.ndarray:
        if self.answer_entails is not None:
            return np.asarray(self.answer_entails, dtype=bool)
        return self.answer_relation() >= EQUIVALENCE_THRESHOLD

    def answer_equivalent(self) -> np.ndarray:
        """Which samples mean the same as the scored answer (both directions entail)."""
        self.answer_relation()
        a = self._answer_entails()
        return a[0] & a[1]

    def answer_similarity(self) -> np.ndarray:
        """Soft agreement of each sample with the answer: the mean of both directions."""
        return self.answer_relation().mean(axis=0)

    def unit_logprobs(self, *, per_token: bool) -> np.ndarray:
        """The samples' log-likelihoods, divided by their token counts with ``per_token``
        (when every count is known and positive; otherwise the raw sums)."""
        lp = np.asarray(self.logprobs, dtype=np.float64)
        n = None if self.lengths is None else np.asarray(self.lengths, dtype=np.float64)
        if not per_token or n is None or not (n > 0).all():
            return lp
        return lp / n

    @property
    def equivalent(self) -> np.ndarray:
        """Bidirectional entailment: the judge's decisions (``entails``), else both P >= 0.5."""
        e = self._entails()
        return e & e.T

    def similarity(self) -> np.ndarray:
        """The symmetric graph weights W = (E + E^T) / 2 (Lin et al. 2024, 'entail')."""
        e = np.asarray(self.entailment, dtype=np.float64)
        return (e + e.T) / 2


def semantic_classes(equivalent: np.ndarray) -> list[list[int]]:
    """Greedy clustering by bidirectional equivalence (Kuhn et al. 2023): each sample joins
    the first class whose first member it is equivalent to, in both directions."""
    classes: list[list[int]] = []
    for i in range(len(equivalent)):
        for members in classes:
            j = members[0]
            if equivalent[j, i] and equivalent[i, j]:
                members.append(i)
                break
        else:
            classes.append([i])
    return classes


def class_distribution(s: SampleContext, classes: list[list[int]], *, per_token: bool) -> np.ndarray:
    """The distribution over the semantic classes seen: each class's likelihood mass
    (log-sum-exp over its *unique* responses, as semantic entropy) renormalized over the
    classes. ``per_token`` uses length-normalized likelihoods (the geometric mean of the
    token probabilities, Malinin & Gales 2021), so long samples do not vanish."""
    lp = s.unit_logprobs(per_token=per_token)
    mass = np.empty(len(classes))
    for k, members in enumerate(classes):
        seen: dict[str, int] = {}
        for i in members:
            seen.setdefault(s.texts[i], i)
        mass[k] = np.logaddexp.reduce(lp[list(seen.values())])
    return np.exp(mass - np.logaddexp.reduce(mass))


def normalized_laplacian(w: np.ndarray) -> np.ndarray:
    """L = I - D^{-1/2} W D^{-1/2} with D the degree matrix of W."""
    d = w.sum(axis=1)
    if (d <= 0).any():
        raise ValueError("similarity: every sample needs a positive degree (the diagonal must be > 0)")
    inv = 1.0 / np.sqrt(d)
    return np.eye(len(w)) - inv[:, None] * w * inv[None, :]
