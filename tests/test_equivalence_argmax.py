"""The paper's equivalence judge (``uq.equivalence = "nli_argmax"``): LM-Polygraph's NLI
setting, entailment = the argmax label. On hand-built three-way NLI matrices our semantic
classes, semantic entropy and graph scorers equal LM-Polygraph's."""
from __future__ import annotations

import numpy as np
import pytest

from franq.scorers.degree_matrix import DegreeMatrixScorer
from franq.scorers.diversity import SampleContext, semantic_classes
from franq.scorers.eccentricity import EccentricityScorer
from franq.scorers.eigval import SumEigenvaluesScorer
from franq.scorers.semantic_entropy import SemanticEntropyScorer
from franq.presets import check_config

ENTAIL = 2  # label order (contradiction, neutral, entailment)


def _case(seed: int, n: int = 8):
    """Three-way NLI probabilities per ordered pair, built so that entailment is often the
    argmax below 0.5 (where P >= 0.5 and argmax disagree)."""
    rng = np.random.default_rng(seed)
    texts = tuple(f"answer {k}" for k in rng.integers(0, 5, size=n))
    uniq = sorted(set(texts))
    meaning = {t: int(rng.integers(0, 2)) for t in uniq}
    probs = {}
    for a in uniq:
        for b in uniq:
            if a == b:
                p = np.array([0.0, 0.0, 1.0])
            elif meaning[a] == meaning[b]:
                e = rng.uniform(0.36, 0.49)  # the argmax, yet below 0.5
                rest = rng.dirichlet([1, 1]) * (1 - e)
                rest = np.minimum(rest, e - 0.01)
                p = np.array([rest[0], 1 - e - rest[0], e]) if 1 - e - rest[0] < e else np.array([e - 0.02, 1 - 2 * e + 0.02, e])
            else:
                p = rng.dirichlet([4, 2, 1])
            probs[a, b] = p / p.sum()
    three = np.array([[probs[a, b] for b in texts] for a in texts])  # (n, n, 3)
    lp = {t: -rng.uniform(1.0, 30.0) for t in uniq}
    ctx = SampleContext(texts, np.array([lp[t] for t in texts]), three[..., ENTAIL],
                        entails=three.argmax(-1) == ENTAIL)
    return ctx, three


CASES = [_case(s) for s in range(10)]


def _polygraph_stats():
    from lm_polygraph.stat_calculators.semantic_classes import SemanticClassesCalculator

    stats = {"sample_texts": [list(c.texts) for c, _ in CASES],
             "sample_log_probs": [list(c.logprobs) for c, _ in CASES],
             "semantic_matrix_entail": np.stack([t[..., ENTAIL] for _, t in CASES])}
    classes = np.stack([t.argmax(-1) for _, t in CASES])
    stats.update(SemanticClassesCalculator()({**stats, "semantic_matrix_classes": classes, "entailment_id": ENTAIL},
                                             [], None))
    return stats


def test_cases_exercise_argmax_below_one_half():
    assert any(((t.argmax(-1) == ENTAIL) & (t[..., ENTAIL] < 0.5)).any() for _, t in CASES)
    # the old rule (both directions >= 0.5) would cluster differently on some case
    assert any(semantic_classes(c.equivalent) != semantic_classes((c.entailment >= 0.5) & (c.entailment >= 0.5).T)
               for c, _ in CASES)


def test_argmax_classes_and_semantic_entropy_equal_lm_polygraph():
    from lm_polygraph.estimators import SemanticEntropy

    stats = _polygraph_stats()
    for i, (c, _) in enumerate(CASES):
        assert semantic_classes(c.equivalent) == stats["semantic_classes_entail"]["class_to_sample"][i]
    theirs = SemanticEntropy(use_unique_responses=True)(stats)
    np.testing.assert_allclose(SemanticEntropyScorer().uncertainty([c for c, _ in CASES]), theirs, atol=1e-9)


@pytest.mark.parametrize("ours, theirs_name", [
    (SumEigenvaluesScorer(), "EigValLaplacian"), (DegreeMatrixScorer(), "DegMat"),
    (EccentricityScorer(), "Eccentricity")])
def test_graph_scorers_read_the_entailment_probabilities_as_lm_polygraph(ours, theirs_name):
    import lm_polygraph.estimators as est

    theirs = getattr(est, theirs_name)(similarity_score="NLI_score", affinity="entail")(_polygraph_stats())
    np.testing.assert_allclose(ours.uncertainty([c for c, _ in CASES]), theirs, atol=1e-6)


def test_nli_argmax_judge_decides_by_the_argmax_label(nli_dir):
    from franq.equivalence.nli import NLIArgmaxJudge
    from franq.faithfulness.nli import NLIFaithfulness

    judge = NLIArgmaxJudge(NLIFaithfulness(nli_dir, device="cpu"))
    texts = ("the cat", "a dog", "the cat", "the red car")
    p, decided = judge.relation("which?", texts)
    assert judge.name.startswith("nli_argmax:")
    assert p.shape == decided.shape == (4, 4) and np.all(np.diag(p) == 1) and decided.diagonal().all()
    assert decided[0, 2] and p[0, 2] == 1  # the same text, twice
    probs = judge.probabilities([("the cat", "a dog"), ("a dog", "the red car")])
    assert probs.shape == (2, 3)
    np.testing.assert_allclose(p[0, 1], probs[0, ENTAIL])
    assert decided[0, 1] == (probs[0].argmax() == ENTAIL) and decided[1, 3] == (probs[1].argmax() == ENTAIL)
    np.testing.assert_allclose(judge.entailment("which?", texts), p)


def test_nli_argmax_is_a_named_setting(nli_dir):
    from franq import registry
    from franq.config import FranqConfig

    assert registry.lookup("equivalence", "nli_argmax").__name__ == "NLIArgmaxJudge"
    cfg = FranqConfig.from_dict({"mode": "short", "uq": {"equivalence": "nli_argmax"},
                                 "equivalence": {"nli_argmax": {"model": str(nli_dir)}}})
    judge = registry.build("equivalence", "nli_argmax", cfg, None)
    assert judge.name.startswith("nli_argmax:")
    with pytest.raises(ValueError, match="equivalence.nli_argmax.model"):
        check_config(FranqConfig.from_dict({"mode": "short", "uq": {"equivalence": "nli_argmax"}}))


def test_samples_context_carries_the_judges_decisions(nli_dir):
    from franq.equivalence.nli import NLIArgmaxJudge
    from franq.evidence.samples import SampleDraws
    from franq.faithfulness.nli import NLIFaithfulness

    class Set:
        texts = ("the cat", "a dog", "the cat")
        logprobs = np.array([-1.0, -2.0, -1.0])

    judge = NLIArgmaxJudge(NLIFaithfulness(nli_dir, device="cpu"))
    draws = SampleDraws.__new__(SampleDraws)
    draws.judge = judge
    ctx = draws.context("q", Set())
    np.testing.assert_array_equal(ctx.entails, judge.relation("q", Set.texts)[1])
    with_answer = draws.context("q", Set(), answer="the red car", answer_logprobs=np.array([-1.0]))
    assert with_answer.answer_entails.shape == (2, 3)
    assert with_answer.with_answer().entails.shape == (4, 4)
