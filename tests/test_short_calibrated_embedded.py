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

    return Franq.from_config(FranqConfig.from_dict({"mode": "short", "model": {"device": "cpu"}}))


@pytest.fixture(scope="module")
def passages():
    return json.loads(resources.files("franq").joinpath("data/example.json").read_text())["passages"]


def test_shipped_short_calibrator_is_applied_and_named(short_franq, passages):
    result = short_franq.score(QUESTION, passages, "Gustave Eiffel")
    assert result.mode == "short" and result.calibration == "condition"
    assert result.calibrator.source == "shipped"
    assert result.calibrator.path.startswith("franq/data/calibrator-short-")
    assert result.calibrator.fitted_for == result.stack
    claim = result.claims[0]
    assert 0.0 <= claim.p_true_calibrated <= 1.0
    assert claim.p_true_if_faithful_calibrated is not None and claim.p_true_if_unfaithful_calibrated is not None
    assert 0.0 <= claim.p_true_raw <= 1.0 and set(claim.signals) >= {"u_semantic_entropy", "u_eigval"}


def test_right_short_answer_scores_above_the_wrong_one(short_franq, passages):
    right = short_franq.score(QUESTION, passages, "Gustave Eiffel").claims[0]
    wrong = short_franq.score(QUESTION, passages, "Albert Einstein").claims[0]
    assert right.p_faithful > wrong.p_faithful
    assert right.p_true_calibrated > wrong.p_true_calibrated
