"""Balance for the contrastive verifier pairs (:mod:`franq.fit.verifier.contrast`): the surface
cues a label must not follow (:func:`cues`), the resampling that keeps them uninformative
(:func:`balance`) and the cue-only baseline that measures it (:func:`cue_baseline`)."""
from __future__ import annotations

import random
import re
from collections import defaultdict

from franq.fit.verifier.data import sentences, words

NEGATION_RE = re.compile(r"\b(?:not|never|no|none|nothing|nobody|neither|nor|cannot|without)\b|n't\b", re.I)
DIGIT_RE = re.compile(r"\d")


def cues(pair: dict) -> list[float]:
    """The surface cues a label must not follow: claim length (words), the share of the
    claim's content words in the premise, where the premise's sentence nearest the claim
    starts (0-1), a digit in the claim, a negation word in the claim."""
    claim, premise = pair["claim"], pair["premise"]
    cw = words(claim)
    best, at = -1.0, 0.0
    sents = sentences(premise)
    offset = 0
    for s in sents:
        o = len(cw & words(s)) / max(1, len(cw))
        if o > best:
            best, at = o, offset / max(1, len(premise))
        offset += len(s) + 1
    return [float(len(claim.split())), len(cw & words(premise)) / max(1, len(cw)), at,
            float(bool(DIGIT_RE.search(claim))), float(bool(NEGATION_RE.search(claim)))]


def balance(pairs: list[dict], rng: random.Random, *, rounds: int = 1, slack: float = 2.0,
            most: float = 1.5) -> list[dict]:
    """The same number of pairs of each label in every cell of a cue-only model's predicted
    label probabilities (a propensity score: within a cell the
    cues say nothing of the label), the rest dropped; ``rounds`` times, refitting the model.
    ``slack``: a label may keep up to that many times the cell's smallest count; ``most``: then
    no label keeps more than that many times the rarest label's total (a random draw, so the
    cues stay as uninformative as they were)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    for _ in range(rounds):
        if len({p["label"] for p in pairs}) < 3 or len(pairs) < 60:
            return []
        x = [cues(p) for p in pairs]
        model = HistGradientBoostingClassifier(max_iter=60, max_depth=4, random_state=0)
        model.fit(x, [p["label"] for p in pairs])
        keys = [(int(a * 6), int(b * 6)) for a, b, _ in model.predict_proba(x)]
        cells: dict[tuple, list[list[dict]]] = defaultdict(lambda: [[], [], []])
        for p, key in zip(pairs, keys):
            cells[key][p["label"]].append(p)
        out = []
        for key in sorted(cells):
            groups = cells[key]
            n = min(len(g) for g in groups)
            for g in groups:
                out.extend(rng.sample(g, min(len(g), int(n * slack))))
        rng.shuffle(out)
        pairs = out
    by_label = [[p for p in pairs if p["label"] == label] for label in range(3)]
    cap = int(most * min(len(g) for g in by_label))
    pairs = [p for g in by_label for p in (rng.sample(g, cap) if len(g) > cap else g)]
    rng.shuffle(pairs)
    return pairs


def cue_baseline(train: list[dict], test: list[dict]) -> float:
    """Balanced accuracy on ``test`` of a logistic regression on :func:`cues` fitted on ``train``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    model.fit([cues(p) for p in train], [p["label"] for p in train])
    return float(balanced_accuracy_score([p["label"] for p in test], model.predict([cues(p) for p in test])))
