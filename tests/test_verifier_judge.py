"""The verifier as franq's one NLI model: the ``verifier`` sample-equivalence
judge (bidirectional entailment, as the paper's DeBERTa judge) and the answering app's
``nli`` check with ``[checks.nli] backend = "verifier"``. Tiny random models."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import make_franq
from franq import registry
from franq.equivalence.verifier import VerifierJudge
from franq.verifier import Verifier

PASSAGES = ["The Eiffel Tower is in Paris, France. It was built from 1887 to 1889."]


def test_judge_matrix_is_the_verifiers_p_supported_both_ways(verifier_dir):
    v = Verifier(verifier_dir)
    judge = VerifierJudge(v)
    texts = ["paris", "in paris", "paris", "berlin"]
    m = judge.entailment("where is the tower?", texts)
    assert m.shape == (4, 4) and np.allclose(np.diag(m), 1.0)
    assert m[0, 2] == 1.0 and m[2, 0] == 1.0  # the same text
    p = v.predict([("where is the tower? paris", "where is the tower? berlin"),
                   ("where is the tower? berlin", "where is the tower? paris")])[:, 0]
    assert m[0, 3] == pytest.approx(p[0]) and m[3, 0] == pytest.approx(p[1])


def test_short_form_samples_with_the_verifier_judge(tiny_lm, verifier_dir):
    config = {"mode": "short", "uq": {"equivalence": "verifier", "n_samples": 3, "max_sample_tokens": 4,
                                      "short_scoring": "in_policy"},
              "equivalence": {"verifier": {"model": str(verifier_dir)}}}
    franq = make_franq(tiny_lm, config)
    result = franq.score("Where is the tower?", PASSAGES, "Paris")
    assert result.stack["equivalence"] == "verifier:tiny-verifier:entailment"
    assert result.scored and result.scored[0].uq_faith is not None
    assert registry.lookup("equivalence", "verifier") is VerifierJudge


def test_answering_nli_check_can_use_the_verifier(tiny_lm, verifier_dir):
    from franq.apps.answering import Answerer

    franq = make_franq(tiny_lm, {"faithfulness": {"name": "lexical", "verifier": {"model": str(verifier_dir)}},
                                 "checks": {"nli": {"backend": "verifier"}}, "model": {"max_new_tokens": 4}})
    result = Answerer(franq).answer("Where is the tower?", PASSAGES, verify="nli", fallback="abstain",
                                    threshold=0.5, mode="short")
    assert result.decision.verify.startswith("nli:verifier:tiny-verifier")
    assert 0.0 <= result.decision.score <= 1.0


def test_the_judge_and_the_faithfulness_backend_share_one_copy_of_the_weights(tiny_lm, verifier_dir):
    config = {"mode": "short", "uq": {"equivalence": "verifier", "n_samples": 3, "max_sample_tokens": 4,
                                      "short_scoring": "in_policy"},
              "faithfulness": {"name": "verifier", "verifier": {"model": str(verifier_dir)}},
              "calibration": {"calibrator": "none"}}
    franq = make_franq(tiny_lm, config)
    franq.score("Where is the tower?", PASSAGES, "Paris")  # builds the judge
    judges = [s for s in vars(franq).values() if isinstance(s, VerifierJudge)]
    judge = judges[0] if judges else registry.build("equivalence", "verifier", franq.config, franq.lm)
    assert judge.verifier.model is franq.faithfulness.verifier.model
    assert judge.verifier.tokenizer is franq.faithfulness.verifier.tokenizer
    other = Verifier(verifier_dir, dtype=torch.float64)  # another dtype: its own copy
    assert other.model is not judge.verifier.model
    assert other.predict([("a b", "a")]).shape == (1, 3)
