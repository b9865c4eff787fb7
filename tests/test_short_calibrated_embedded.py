"""The shipped short-form calibrator on the real embedded model (slow; marked): short form
is calibrated like long form, and on the bundled example the right short answer scores
above the wrong one."""
from __future__ import annotations

import json
from importlib import resources

import pytest

pytestmark = pytest.mark.embedded

QUESTION = "Who designed the Eiffel Tower?"


@pytest.fixture(scope="module")
def short_franq():
    from franq.config import FranqConfig
    from franq.pipeline import Franq

    # the combined-v1 short-form calibrators (the verifier's short calibrator has no observer twin)
    return Franq.from_config(FranqConfig.from_dict({"mode": "short", "model": {"device": "cpu"},
                                                    "faithfulness": {"name": "combined"}}))


@pytest.fixture(scope="module")
def passages():
    return json.loads(resources.files("franq").joinpath("data/example.json").read_text())["passages"]


@pytest.mark.parametrize("generated, preset, signals", [
    (True, "short", {"u_semantic_entropy", "u_eigval"}),  # in-policy: franq's own answer
    (False, "observer", {"p_answer_share", "p_answer_consistency"}),  # a given answer
])
def test_shipped_short_calibrators_are_applied_and_named(short_franq, passages, generated, preset, signals):
    from franq.io import Example, parse_passages

    [result] = short_franq.score_many([Example(QUESTION, parse_passages(passages), "Gustave Eiffel")],
                                      generated=generated)
    assert result.mode == "short" and result.stack["mode"] == preset and result.calibration == "condition"
    assert result.calibrator.source == "shipped"
    assert result.calibrator.path.startswith("franq/data/calibrator-short-")
    assert ("observer" in result.calibrator.path) == (preset == "observer")
    assert result.calibrator.fitted_for == result.stack
    claim = result.claims[0]
    assert 0.0 <= claim.p_true_calibrated <= 1.0
    assert claim.p_true_if_supported_calibrated is not None and claim.p_true_if_unfaithful_calibrated is not None
    assert 0.0 <= claim.p_true_raw <= 1.0 and set(claim.signals) >= signals


def test_right_short_answer_scores_above_the_wrong_one(short_franq, passages):
    right = short_franq.score(QUESTION, passages, "Gustave Eiffel").claims[0]
    wrong = short_franq.score(QUESTION, passages, "Albert Einstein").claims[0]
    assert right.p_faithful > wrong.p_faithful
    assert right.p_true_calibrated > wrong.p_true_calibrated
