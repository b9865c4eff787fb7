"""answer_pass / next_token_logprobs_after / sampler prefill+entropies: the prefix-sharing
shortcuts give the same numbers as full passes."""
import numpy as np
import torch

from conftest import assert_float32_close
from franq.types import Passage


def _prompt(lm):
    return list(lm.rag_prompt("who wrote it?", [Passage("It was written by Ann Lee in 1901.", "Book")]).ids)


def test_answer_pass_matches_teacher_forcing_and_entropy(tiny_lm):
    prompt = _prompt(tiny_lm)
    answer = tiny_lm.encode(" Ann Lee wrote it.")
    got = tiny_lm.answer_pass(prompt, answer)
    want = tiny_lm.continuation_logprobs([(prompt, answer)])[0]
    np.testing.assert_allclose(got.token_logprobs, want, atol=1e-4)
    assert got.length == len(prompt) + len(answer)
    # entropy of the first answer token's distribution, computed by hand
    with torch.inference_mode():
        logits = tiny_lm.model(input_ids=torch.tensor([prompt])).logits[0, -1].float()
    logp = torch.log_softmax(logits, -1)
    np.testing.assert_allclose(got.token_entropies[0], float(-(logp.exp() * logp).sum()), rtol=1e-4)
    assert np.all(got.token_entropies >= 0)


def test_next_token_after_cache_equals_full_prompt(tiny_lm):
    prompt = _prompt(tiny_lm)
    answer = tiny_lm.encode(" Ann Lee.")
    p = tiny_lm.answer_pass(prompt, answer)
    suffixes = [tiny_lm.encode(" Is it true?"), tiny_lm.encode(" Really, is the claim about Ann Lee true? Say")]
    cands = tiny_lm.encode(" True")[:1] + tiny_lm.encode(" False")[:1]
    got = tiny_lm.next_token_logprobs_after(p.cache, p.length, suffixes, cands, batch_size=2)
    want = tiny_lm.next_token_logprobs([prompt + answer + s for s in suffixes], cands)
    np.testing.assert_allclose(got, want, atol=1e-4)
    # the cache is not consumed: a second call gives the same numbers
    again = tiny_lm.next_token_logprobs_after(p.cache, p.length, suffixes[:1], cands)
    assert_float32_close(again, got[:1])  # a batch of 1 against a batch of 2


def test_sampler_prefill_and_entropies(tiny_lm):
    prompt = _prompt(tiny_lm)
    plain = tiny_lm.sample(prompt, 3, max_new_tokens=6, seed=1, greedy_first=True)
    pre = tiny_lm.prefill(prompt)
    reused = tiny_lm.sample(prompt, 3, max_new_tokens=6, seed=1, greedy_first=True, prefill=pre)
    assert reused.texts == plain.texts
    for s in reused.samples:
        assert len(s.token_entropies) == len(s.token_ids)
    g = reused.samples[0]
    if g.token_ids:
        tf = tiny_lm.answer_pass(prompt, list(g.token_ids))
        np.testing.assert_allclose(g.token_entropies, tf.token_entropies, rtol=1e-3, atol=1e-4)


def test_p_true_followup_and_probability(tiny_lm):
    from franq.lm.labels import pair_probability as probability
    from franq.lm.prompts import CLAIM_QUESTION
    from franq.evaluation.p_true import PTrue

    pt = PTrue(tiny_lm)
    assert pt.candidates[0] != pt.candidates[1]
    prompt = _prompt(tiny_lm)
    answer = " Ann Lee wrote it."
    follow = pt.claim_followups(answer, ["Ann Lee wrote it."])[0]
    assert "Ann Lee wrote it." in tiny_lm.tokenizer.decode(follow)
    p = tiny_lm.answer_pass(prompt, tiny_lm.encode(answer))
    lp = tiny_lm.next_token_logprobs_after(p.cache, p.length, [follow], pt.candidates)[0]
    assert 0 < probability(lp[0], lp[1]) < 1
    assert probability(0.0, 0.0) == 0.5 and probability(-1.0, -3.0) > 0.5
    assert "{claim}" in CLAIM_QUESTION


def test_cache_keyword_follows_the_installed_transformers():
    # transformers 5.x takes `cache` and warns on `past_key_values`; older ones take only
    # `past_key_values`: franq passes and reads whichever the model's forward has
    from types import SimpleNamespace

    from franq.lm.teacher_forcing import returned_cache, with_cache

    class Old(torch.nn.Module):
        def forward(self, input_ids=None, past_key_values=None, use_cache=None):
            return None

    class New(torch.nn.Module):
        def forward(self, input_ids=None, cache=None, use_cache=None):
            return None

    assert with_cache(SimpleNamespace(model=Old()), "kv") == {"past_key_values": "kv"}
    assert with_cache(SimpleNamespace(model=New()), "kv") == {"cache": "kv"}
    assert returned_cache(SimpleNamespace(past_key_values="old")) == "old"
    assert returned_cache(SimpleNamespace(cache="new")) == "new"
