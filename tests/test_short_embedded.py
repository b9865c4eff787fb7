"""Short-form mode on the real embedded model (slow; marked)."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.embedded


@pytest.fixture(scope="module")
def embedded_lm():
    from franq.lm import CausalLM

    return CausalLM.load(device="cpu")


def test_embedded_samples_are_one_line_with_exact_loglikelihoods(embedded_lm):
    from franq.types import Passage

    prompt = embedded_lm.rag_prompt("What is the capital of France?",
                                    [Passage("Paris is the capital and largest city of France.", "Paris")]).ids
    out = embedded_lm.sample(prompt, 4, max_new_tokens=12, seed=0)
    exact = embedded_lm.continuation_logprobs([(prompt, s.token_ids) for s in out.samples])
    for s, lp in zip(out.samples, exact):
        assert "\n" not in s.text
        assert s.logprob == pytest.approx(float(np.sum(lp)), abs=1e-3)
    assert any("Paris" in s.text for s in out.samples)
