"""The verdict is the product: on the embedded default (SmolLM2 + the shipped verifier and
its three-condition calibrator) the bundled example's contradicted claims come out below
0.5 and the supported ones at or above."""
from __future__ import annotations

import json
from importlib import resources

import pytest

pytestmark = [pytest.mark.embedded, pytest.mark.slow]

CONTRADICTED = ("solid gold", "Berlin")


def test_bundled_example_contradicted_claims_below_half_the_others_at_or_above():
    import franq

    ex = json.loads(resources.files("franq").joinpath("data/example.json").read_text(encoding="utf-8"))
    result = franq.score(ex["question"], ex["passages"], ex["answer"])
    assert result.stack.faithfulness.startswith("verifier"), result.stack.faithfulness
    assert result.calibration != "none", "the default stack applies its shipped calibrator"
    scored = result.scored
    contradicted = [c for c in scored if any(w in c.claim.text for w in CONTRADICTED)]
    supported = [c for c in scored if c not in contradicted]
    assert len(contradicted) == 2 and len(supported) >= 3, [c.claim.text for c in scored]
    for c in contradicted:
        assert c.p_true_calibrated < 0.5, (c.claim.text, c.p_true_calibrated, c.p_contradicted)
        assert c.p_contradicted > c.p_faithful, (c.claim.text, c.p_contradicted, c.p_faithful)
    for c in supported:
        assert c.p_true_calibrated >= 0.5, (c.claim.text, c.p_true_calibrated)
