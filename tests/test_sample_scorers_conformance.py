"""Our sample-diversity scorers equal LM-Polygraph's estimators (higher = more uncertain
on their side) on identical samples and matrices, to 1e-6."""
from __future__ import annotations

import numpy as np
import pytest

from franq.equivalence.jaccard import JaccardJudge
from franq.scorers.degree_matrix import DegreeMatrixScorer
from franq.scorers.eccentricity import EccentricityScorer
from franq.scorers.eigval import SumEigenvaluesScorer
from franq.scorers.lexical_similarity import LexicalSimilarityScorer
from franq.scorers.diversity import SampleContext, semantic_classes
from franq.scorers.semantic_entropy import SemanticEntropyScorer

POOL = ["Paris", "Paris, France", "Lyon", "the city of Paris", "Marseille", "It is Paris.", "paris"]


def _random_case(seed: int, n: int = 10) -> SampleContext:
    rng = np.random.default_rng(seed)
    texts = tuple(rng.choice(POOL[: rng.integers(2, len(POOL) + 1)], size=n))
    meaning = {t: rng.integers(0, 3) for t in set(texts)}
    # entailment: high within a meaning, low across, with noise; repeated texts identical
    uniq = sorted(set(texts))
    e = {}
    for a in uniq:
        for b in uniq:
            e[a, b] = 1.0 if a == b else (rng.uniform(0.55, 1.0) if meaning[a] == meaning[b]
                                          else rng.uniform(0.0, 0.45))
    ent = np.array([[e[a, b] for b in texts] for a in texts])
    lp = {t: -rng.uniform(0.1, 6.0) for t in uniq}
    return SampleContext(texts, np.array([lp[t] for t in texts]), ent)


CASES = [_random_case(s) for s in range(12)]


def _stats(cases, matrix=True):
    from lm_polygraph.stat_calculators.semantic_classes import SemanticClassesCalculator

    stats = {"sample_texts": [list(c.texts) for c in cases],
             "sample_log_probs": [list(c.logprobs) for c in cases]}
    if matrix:
        stats["semantic_matrix_entail"] = np.stack([c.entailment for c in cases])
        classes = np.stack([np.where(c.entailment >= 0.5, 2, 0) for c in cases])
        stats.update(SemanticClassesCalculator()({**stats, "semantic_matrix_classes": classes,
                                                  "entailment_id": 2}, [], None))
    return stats


def test_semantic_classes_equal_lm_polygraph():
    stats = _stats(CASES)
    for i, c in enumerate(CASES):
        assert semantic_classes(c.equivalent) == stats["semantic_classes_entail"]["class_to_sample"][i]


def test_semantic_entropy_equals_lm_polygraph_unique_sum():
    from lm_polygraph.estimators import SemanticEntropy

    theirs = SemanticEntropy(use_unique_responses=True)(_stats(CASES))
    np.testing.assert_allclose(SemanticEntropyScorer().uncertainty(CASES), theirs, atol=1e-6)


def test_semantic_entropy_class_mass_never_exceeds_one():
    c = SampleContext(("Paris",) * 10, np.full(10, -0.01), np.ones((10, 10)))
    u = SemanticEntropyScorer().uncertainty([c])[0]
    assert u == pytest.approx(0.01)
    scorer = SemanticEntropyScorer()
    assert scorer.probability(scorer.uncertainty([c]))[0] <= 1.0


@pytest.mark.parametrize("ours, theirs_name", [
    (SumEigenvaluesScorer(), "EigValLaplacian"), (DegreeMatrixScorer(), "DegMat"),
    (EccentricityScorer(), "Eccentricity")])
def test_graph_scorers_equal_lm_polygraph_on_entailment_matrices(ours, theirs_name):
    import lm_polygraph.estimators as est

    theirs = getattr(est, theirs_name)(similarity_score="NLI_score", affinity="entail")(_stats(CASES))
    np.testing.assert_allclose(ours.uncertainty(CASES), theirs, atol=1e-6)


@pytest.mark.parametrize("ours, theirs_name", [
    (SumEigenvaluesScorer(), "EigValLaplacian"), (DegreeMatrixScorer(), "DegMat"),
    (EccentricityScorer(), "Eccentricity")])
def test_graph_scorers_equal_lm_polygraph_on_jaccard_similarity(ours, theirs_name):
    import lm_polygraph.estimators as est

    cases = [SampleContext(c.texts, c.logprobs, JaccardJudge().entailment("q", c.texts)) for c in CASES]
    theirs = getattr(est, theirs_name)(similarity_score="Jaccard_score")(_stats(cases, matrix=False))
    np.testing.assert_allclose(ours.uncertainty(cases), theirs, atol=1e-6)


def test_lexical_similarity_equals_lm_polygraph_rouge_l():
    from lm_polygraph.estimators import LexicalSimilarity

    theirs = LexicalSimilarity("rougeL")(_stats(CASES, matrix=False))
    np.testing.assert_allclose(LexicalSimilarityScorer().uncertainty(CASES), theirs, atol=1e-6)


def test_scores_are_probability_like_and_decrease_with_uncertainty():
    agree = SampleContext(("Paris",) * 5, np.full(5, -0.1), np.ones((5, 5)))
    split = SampleContext(("Paris", "Lyon", "Nice", "Metz", "Caen"), np.full(5, -1.6), np.eye(5))
    from claims.types import Claim
    from franq.stages.record import ClaimEvidence
    from franq.scorers.base import primary

    evidence = [ClaimEvidence.of(Claim("a", ((0, 1),)), statement="q a", samples=c) for c in (agree, split)]
    for scorer in (SemanticEntropyScorer(), SumEigenvaluesScorer(), DegreeMatrixScorer(),
                   EccentricityScorer(), LexicalSimilarityScorer()):
        s = scorer.probability(scorer.score(evidence)[primary(scorer).name])
        assert ((0 <= s) & (s <= 1)).all(), scorer.name
        assert s[0] > s[1], scorer.name
    assert SumEigenvaluesScorer().uncertainty([split])[0] == pytest.approx(5.0)
    assert SumEigenvaluesScorer().probability(SumEigenvaluesScorer().uncertainty([split]))[0] == pytest.approx(0.2)


def test_sample_context_error_names_the_field():
    with pytest.raises(ValueError, match="entailment"):
        SampleContext(("a", "b"), np.zeros(2), np.eye(3))


@pytest.mark.parametrize("scorer", [SemanticEntropyScorer(), SumEigenvaluesScorer(), DegreeMatrixScorer(),
                                    EccentricityScorer(), LexicalSimilarityScorer()], ids=lambda s: s.name)
def test_score_on_evidence_returns_the_declared_uncertainty_signal(scorer):
    from claims.types import Claim
    from franq.evidence import SAMPLES
    from franq.stages.record import ClaimEvidence
    from franq.scorers.base import Scorer, check_output, primary

    evidence = [ClaimEvidence.of(Claim("a", ((0, 1),)), statement="q a", samples=c) for c in CASES[:3]]
    out = check_output(scorer, scorer.score(evidence), 3)
    assert isinstance(scorer, Scorer) and scorer.needs == {SAMPLES}
    sig = next(s for s in scorer.signals if s.name == f"u_{scorer.name}")
    if scorer.name == "semantic_entropy":  # a probability first (the mix's scale), then the paper's raw value
        assert list(out) == [primary(scorer).name, sig.name] == ["p_semantic_entropy", "u_semantic_entropy"]
    else:
        assert list(out) == [primary(scorer).name] == [sig.name]
    assert sig.scale == "uncertainty" and not sig.higher_is_true
    np.testing.assert_allclose(out[sig.name], scorer.uncertainty(CASES[:3]))


def test_eccentricity_leaves_out_an_eigenvalue_at_the_threshold_whatever_the_rounding():
    # three samples, each pair 0.75 similar: Laplacian eigenvalues 0, 0.9, 0.9; LAPACK
    # returns one 0.9 a hair below and one exactly, so a plain `< 0.9` keeps an arbitrary
    # vector of that plane (U = 1 or 0 with the order of the samples)
    e = np.full((3, 3), 0.75)
    np.fill_diagonal(e, 1.0)
    for order in ([0, 1, 2], [2, 0, 1], [1, 2, 0]):
        ctx = SampleContext(("a", "b", "c"), np.zeros(3), e[np.ix_(order, order)])
        assert EccentricityScorer().uncertainty([ctx])[0] == pytest.approx(0.0, abs=1e-12)
