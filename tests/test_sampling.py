"""Shared-prefill sampling on the tiny model: same first-token distribution as plain
``generate``, exact log-likelihoods, stop conditions, reproducibility."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from franq.types import Passage

PASSAGES = [Passage("The Eiffel Tower is in Paris, France.", "Eiffel Tower")]


@pytest.fixture(scope="module")
def prompt(tiny_lm):
    return list(tiny_lm.rag_prompt("Where is the Eiffel Tower?", PASSAGES).ids)


def test_shared_prefill_first_tokens_follow_the_same_distribution_as_generate(tiny_lm, prompt):
    from scipy.stats import chi2_contingency
    from transformers import GenerationConfig

    n, k = 3000, 8
    ours = tiny_lm.sample(prompt, n, top_k=k, max_new_tokens=1, stop_at_newline=False, seed=11)
    ours_first = [s.token_ids[0] if s.token_ids else tiny_lm.tokenizer.eos_token_id for s in ours.samples]
    torch.manual_seed(12)
    ids = torch.tensor([prompt])
    cfg = GenerationConfig(do_sample=True, top_k=k, temperature=1.0, top_p=1.0, max_new_tokens=1,
                           num_return_sequences=n, pad_token_id=tiny_lm.pad_id,
                           eos_token_id=tiny_lm.tokenizer.eos_token_id)
    theirs = tiny_lm.model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=cfg)
    theirs_first = theirs[:, len(prompt)].tolist()
    vocab = sorted(set(ours_first) | set(theirs_first))
    table = np.array([[ours_first.count(v) for v in vocab], [theirs_first.count(v) for v in vocab]])
    assert len(vocab) <= k
    _, p_value, _, _ = chi2_contingency(table)
    assert p_value > 0.01, (vocab, table)


def test_sampled_loglikelihoods_equal_teacher_forcing(tiny_lm, prompt):
    samples = tiny_lm.sample(prompt, 6, max_new_tokens=12, temperature=1.3, seed=3)
    exact = tiny_lm.continuation_logprobs([(prompt, s.token_ids) for s in samples.samples if s.token_ids])
    got = [s for s in samples.samples if s.token_ids]
    for s, lp in zip(got, exact):
        np.testing.assert_allclose(s.token_logprobs, lp, atol=1e-4)
        assert s.logprob == pytest.approx(float(np.sum(lp)), abs=1e-3)


def test_same_seed_gives_same_samples_and_other_seed_differs(tiny_lm, prompt):
    a = tiny_lm.sample(prompt, 5, max_new_tokens=10, temperature=1.5, seed=7)
    b = tiny_lm.sample(prompt, 5, max_new_tokens=10, temperature=1.5, seed=7)
    c = tiny_lm.sample(prompt, 5, max_new_tokens=10, temperature=1.5, seed=8)
    assert a == b
    assert [s.token_ids for s in a.samples] != [s.token_ids for s in c.samples]


def test_sampling_stops_at_newline_after_text_and_at_eos(tiny_lm, prompt):
    tok = tiny_lm.tokenizer
    eos = tok.eos_token_id
    out = tiny_lm.sample(prompt, 300, max_new_tokens=15, temperature=3.0, seed=5)
    stops = {s.stop for s in out.samples}
    assert {"newline", "eos", "length"} <= stops
    for s in out.samples:
        assert eos not in s.token_ids
        assert "\n" not in s.text
        pieces = [tok.decode([t]) for t in s.token_ids]
        if s.stop == "length":
            assert len(s.token_ids) == 15
        if s.stop == "newline":
            assert "\n" in pieces[-1]
            assert tok.decode(s.token_ids[:-1]).strip() or pieces[-1].split("\n")[0].strip()
        # no earlier token ended the answer
        body = tok.decode(s.token_ids[:-1] if s.stop == "newline" else s.token_ids)
        assert "\n" not in body.lstrip()


def test_newline_is_ignored_when_stop_at_newline_is_off(tiny_lm, prompt):
    out = tiny_lm.sample(prompt, 100, max_new_tokens=15, temperature=3.0, seed=5, stop_at_newline=False)
    assert {s.stop for s in out.samples} <= {"eos", "length"}


def test_temperature_zero_is_greedy_generate(tiny_lm, prompt):
    greedy = tiny_lm.generate(prompt, max_new_tokens=8)
    ours = tiny_lm.sample(prompt, 2, temperature=0.0, max_new_tokens=8, stop_at_newline=False)
    for s in ours.samples:
        assert s.token_ids == greedy.token_ids
        np.testing.assert_allclose(s.token_logprobs, greedy.token_logprobs, atol=1e-4)


def test_top_p_keeps_only_the_nucleus(tiny_lm, prompt):
    logits = tiny_lm.model(torch.tensor([prompt])).logits[0, -1].float()
    probs = torch.softmax(logits, -1)
    order = torch.argsort(probs, descending=True)
    cum = probs[order].cumsum(0)
    nucleus = set(order[: int((cum < 0.5).sum()) + 1].tolist())
    out = tiny_lm.sample(prompt, 200, top_p=0.5, max_new_tokens=1, stop_at_newline=False, seed=2)
    assert {s.token_ids[0] for s in out.samples if s.token_ids} <= nucleus


@pytest.mark.parametrize("option, value, field", [
    ("n", 0, "n:"), ("temperature", -1.0, "temperature"), ("top_p", 0.0, "top_p"),
    ("top_k", -2, "top_k"), ("max_new_tokens", 0, "max_new_tokens")])
def test_bad_sampling_option_error_names_the_option(tiny_lm, prompt, option, value, field):
    kwargs = {"n": 2, option: value}
    n = kwargs.pop("n")
    with pytest.raises(ValueError, match=field):
        tiny_lm.sample(prompt, n, **kwargs)


def test_greedy_first_row_is_the_greedy_answer_and_others_sample(tiny_lm, prompt):
    greedy = tiny_lm.sample(prompt, 1, temperature=0.0, max_new_tokens=8, stop_at_newline=False)
    mixed = tiny_lm.sample(prompt, 6, temperature=1.5, max_new_tokens=8, stop_at_newline=False, seed=4,
                           greedy_first=True)
    assert mixed.samples[0].token_ids == greedy.samples[0].token_ids
    assert len({s.token_ids for s in mixed.samples[1:]}) > 1
