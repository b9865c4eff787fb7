"""CCP (claim-conditioned probability, Fadeeva et al. 2024): the token rule equals
LM-Polygraph's on hand-built alternatives and NLI labels; in the pipeline it reads the
top-k alternatives the with-passages pass keeps, with a tiny NLI model."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_float32_close, make_franq
from franq.io import Example
from franq.types import Passage
from franq.scorers.ccp import claim_ccp, combine_nli, token_log_ccp

LABELS = ("entail", "contra", "neutral")


def test_hand_computed_token_ccp():
    # own token p = 0.5; alternatives 0.2 (entails), 0.2 (contradicts), 0.1 (neutral)
    lp = np.log([0.5, 0.2, 0.2, 0.1])
    assert np.exp(token_log_ccp(lp, ["entail", "entail", "contra", "neutral"])) == pytest.approx(0.7 / 0.9)
    assert claim_ccp([lp, lp], [["entail", "entail", "contra", "neutral"]] * 2) == pytest.approx((0.7 / 0.9) ** 2)
    assert claim_ccp([lp], [["entail", "neutral", "neutral", "neutral"]]) == pytest.approx(1.0)


def test_token_ccp_and_nli_combination_equal_lm_polygraph():
    from lm_polygraph.estimators.claim.claim_conditioned_probability import ClaimConditionedProbabilityClaim

    theirs = ClaimConditionedProbabilityClaim(nli_context="fact_pref", is_stopword=lambda t: False)
    for a in LABELS:
        for b in LABELS:
            assert combine_nli(a, b) == theirs._combine_nli(a, b)
    rng = np.random.default_rng(0)
    for _ in range(50):
        k = int(rng.integers(2, 8))
        lp = np.log(rng.dirichlet(np.ones(k)))
        forward, backward = rng.choice(LABELS, k), rng.choice(LABELS, k)
        matrix = [[None] * k for _ in range(k)]
        for j in range(k):
            matrix[0][j], matrix[j][0] = forward[j], backward[j]
        alts = [(f"w{j}", lp[j]) for j in range(k)]
        ours = token_log_ccp(lp, ["entail"] + [combine_nli(forward[j], backward[j]) for j in range(1, k)])
        assert ours == pytest.approx(theirs._token_ccp(alts, matrix), abs=1e-12)


def test_ccp_in_the_long_pipeline_reads_the_pass_alternatives(tiny_lm, nli_dir):
    ex = Example("When was the Eiffel Tower built?", (Passage("The Eiffel Tower was built from 1887 to 1889."),),
                 "It was built from 1887 to 1889. It is in Paris.")
    plain = make_franq(tiny_lm, {"mode": "long"}).score_many([ex])[0]
    franq = make_franq(tiny_lm, {"mode": "long", "uq": {"long": {"faith": "claim_prob", "unfaith": "parametric",
                                                                  "extra": ["ccp"]}},
                                 "scorers": {"ccp": {"model": str(nli_dir)}}})
    res = franq.score_many([ex])[0]
    scored = res.scored
    assert scored and all(0.0 <= c.signals["p_ccp"] <= 1.0 for c in scored)
    # keeping the top-k alternatives leaves the pass's log-probabilities as they were
    assert_float32_close([c.uq_faith for c in scored], [c.uq_faith for c in plain.scored])


def test_ccp_without_an_nli_model_is_refused_by_name(tiny_lm):
    with pytest.raises(ValueError, match="scorers.ccp.model"):
        make_franq(tiny_lm, {"mode": "long", "uq": {"long": {"faith": "claim_prob", "unfaith": "parametric",
                                                              "extra": ["ccp"]}}})
