"""Raw values that point the right way: in every preset the two UQ
scorers' probabilities are on one scale, so the uncalibrated FRANQ mix
``P_f * UQ_faith + (1 - P_f) * UQ_unfaith`` is flat in P_faithful when both read the same
evidence the same way, rises with it when UQ_faith >= UQ_unfaith, and never runs backwards
because one scale sits near 0 and the other near 1 (exp(-semantic entropy) of 16-token
samples against 1 / sum of eigenvalues). Seeded random inputs, every scorer of every preset."""
from __future__ import annotations

import numpy as np
import pytest

from claims.types import Claim
from franq import registry
from franq.config import FranqConfig
from franq.evidence import ANSWER_SAMPLES, INTERNALS, SAMPLES
from franq.stages.record import ClaimEvidence
from franq.mix import mix
from franq.presets import PRESETS, scorer_names
from franq.scorers.base import primary
from franq.scorers.diversity import SampleContext

CONFIG = FranqConfig()
P_F = np.linspace(0.0, 1.0, 11)


def _probabilities(name: str, evidence: list[ClaimEvidence]) -> np.ndarray:
    scorer = registry.lookup("scorers", name)()
    out = scorer.score(evidence)
    return scorer.probability(out[primary(scorer).name])


def _samples_world(rng, *, sizes, lp_per_sample=None, soft=False, answer_class=None):
    """N samples in hard classes of ``sizes`` (texts distinct, so every response is unique),
    each sample ``lp_per_sample`` (multi-token: tens of nats) or random; with
    ``answer_class``, the scored answer means the same as that class."""
    n = sum(sizes)
    label = np.repeat(np.arange(len(sizes)), sizes)
    rng.shuffle(label)
    same = label[:, None] == label[None, :]
    ent = np.where(same, 1.0, 0.0)
    if soft:
        ent = np.where(same, rng.uniform(0.5, 1.0, (n, n)), rng.uniform(0.0, 0.49, (n, n)))
        np.fill_diagonal(ent, 1.0)
    lp = np.full(n, lp_per_sample) if lp_per_sample is not None else -rng.uniform(2.0, 40.0, n)
    texts = tuple(f"sample {k}" for k in range(n))
    kw = {}
    if answer_class is not None:
        rel = (label == answer_class).astype(float)
        kw = {"answer_entailment": np.stack([rel, rel]), "answer_logprobs": -rng.uniform(0.1, 3.0, 5),
              "answer_closed_logprobs": -rng.uniform(0.1, 3.0, 5), "answer": "the answer"}
    return SampleContext(texts, lp, ent, lengths=np.full(n, 16), **kw)


def _evidence(preset, rng, *, sizes, equal_likelihood: bool, soft=False):
    claim = Claim("a claim", ((0, 7),), token_positions=(1, 2, 3))
    if SAMPLES in preset.evidence:
        s = _samples_world(rng, sizes=sizes, lp_per_sample=-float(rng.uniform(15, 40)) if equal_likelihood else None,
                           soft=soft, answer_class=0 if ANSWER_SAMPLES in preset.evidence else None)
        return ClaimEvidence.of(claim, statement="q a", samples=s, closed_samples=s)
    lp = -rng.uniform(0.01, 4.0, 6)
    closed = lp if equal_likelihood else -rng.uniform(0.01, 4.0, 6)
    return ClaimEvidence.of(claim, rag_logprobs=lp, closed_logprobs=closed)


def _pairs():
    for preset in PRESETS.values():
        s = scorer_names(CONFIG, preset)
        if s is None:  # the fast presets: the verifier alone, no UQ scorer to put on a raw scale
            continue
        yield pytest.param(preset, s.faith, s.unfaith, s.extra, id=preset.name)


def _reads_probes(name: str) -> bool:
    return INTERNALS in registry.lookup("scorers", name).needs and "probe" in name


def _asks_a_server(name: str) -> bool:
    """A scorer that needs a model of its own to be built (``chat_p_true`` / ``_rag``: a chat
    server's P(True), on the probability scale by construction)."""
    return any(getattr(s, "required", False) for s in getattr(registry.lookup("scorers", name), "settings", ()))


@pytest.mark.parametrize("preset, faith, unfaith, extra", list(_pairs()))
def test_raw_mix_is_flat_when_both_scorers_read_the_same_evidence(preset, faith, unfaith, extra):
    rng = np.random.default_rng(27)
    if _reads_probes(faith) or _asks_a_server(faith):  # probes: P(low semantic entropy) from two passes; chat:
        # P(True) with and without the passages: each one scale by construction
        p = rng.uniform(0, 1, 50)
        for name in (faith, unfaith):  # the probe's output is the probability, on both branches
            cls = registry.lookup("scorers", name)
            assert primary(cls).scale == "prob"
            np.testing.assert_allclose(cls.probability(object.__new__(cls), p), p)
        return
    for trial in range(40):
        k = int(rng.integers(1, 5))
        size = int(rng.integers(1, 5))
        ev = [_evidence(preset, rng, sizes=[size] * k, equal_likelihood=True)]
        a, b = _probabilities(faith, ev)[0], _probabilities(unfaith, ev)[0]
        assert 0.0 <= a <= 1.0 and 0.0 <= b <= 1.0
        assert a == pytest.approx(b, abs=1e-9), (trial, k, size, a, b)
        if SAMPLES in preset.evidence and ANSWER_SAMPLES not in preset.evidence:
            assert a == pytest.approx(1.0 / k)  # one over the number of meanings
        if k == 1 and SAMPLES in preset.evidence:
            assert a == pytest.approx(1.0)  # every sample (and the answer) means the same
        p_true = mix(P_F, np.full_like(P_F, a), np.full_like(P_F, b))
        assert np.ptp(p_true) < 1e-9


@pytest.mark.parametrize("preset, faith, unfaith, extra", list(_pairs()))
def test_every_declared_probability_lies_in_0_1_and_the_mix_follows_the_larger_branch(preset, faith, unfaith, extra):
    rng = np.random.default_rng(7)
    names = [n for n in (faith, unfaith, *extra) if not (_reads_probes(n) or _asks_a_server(n))]
    for _ in range(30):
        sizes = list(rng.integers(1, 5, size=int(rng.integers(1, 4))))
        ev = [_evidence(preset, rng, sizes=sizes, equal_likelihood=False, soft=bool(rng.integers(0, 2)))]
        got = {n: _probabilities(n, ev)[0] for n in names}
        for n, v in got.items():
            assert 0.0 <= v <= 1.0, (n, v)
        if faith in got and unfaith in got:
            a, b = got[faith], got[unfaith]
            p_true = mix(P_F, np.full_like(P_F, a), np.full_like(P_F, b))
            steps = np.diff(p_true)
            assert (steps >= -1e-12).all() if a >= b else (steps <= 1e-12).all()


def test_the_issue_case_no_longer_runs_backwards():
    """All ten 16-token samples mean the same: the paper's raw exp(-SE) is ~0 while
    1 / sum of eigenvalues is 1, so the raw mix fell from 0.9 to 0.1 as P_faithful rose."""
    rng = np.random.default_rng(0)
    ev = [_evidence(PRESETS["short"], rng, sizes=[10], equal_likelihood=True)]
    a, b = _probabilities("semantic_entropy", ev)[0], _probabilities("eigval", ev)[0]
    assert a == pytest.approx(1.0) and b == pytest.approx(1.0)
    se = registry.lookup("scorers", "semantic_entropy")().score(ev)["u_semantic_entropy"][0]
    assert np.exp(-se) < 1e-5  # the paper's raw value, kept as a signal, is no probability
    assert mix(0.9, a, b) >= mix(0.1, a, b)


def test_distinct_long_samples_give_one_over_the_number_of_meanings_not_zero():
    """Ten different 16-token answers whose likelihoods differ by tens of nats (a small
    model's samples): both branches say about one meaning in ten."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        s = SampleContext(tuple(f"sample {k}" for k in range(10)), -rng.uniform(20.0, 60.0, 10), np.eye(10),
                          lengths=np.full(10, 16))
        ev = [ClaimEvidence.of(Claim("a", ((0, 1),)), statement="q a", samples=s)]
        a, b = _probabilities("semantic_entropy", ev)[0], _probabilities("eigval", ev)[0]
        assert b == pytest.approx(0.1) and 0.1 / 3 < a <= 0.1 + 1e-12, a
