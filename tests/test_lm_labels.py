"""P(first word) between two answer words: first-token lookup, the next-token share, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import assert_float32_close
from franq.errors import LabelWordsError
from franq.lm.labels import LabelWords, label_probability, pair_probability
from franq.types import Passage

PAIRS = [(("yes", "Yes"), ("no", "No")), ("True", "False"), ("1", "0"),
         ("sufficient", "insufficient"), ("correct", "incorrect")]


def _prompts(lm) -> list[list[int]]:
    passages = [Passage("The Eiffel Tower is in Paris, France.", "Eiffel Tower")]
    return [list(lm.rag_prompt("Where is the Eiffel Tower?", passages).ids),
            list(lm.closed_book_prompt("Who designed it?").ids),
            list(lm.closed_book_prompt("When was it built?").ids)]


def _softmax_share(lm, prompts, words: LabelWords) -> np.ndarray:
    """The definition: one unpadded forward pass per prompt, probabilities summed per word."""
    out = []
    with torch.inference_mode():
        for p in prompts:
            probs = torch.softmax(lm.model(input_ids=torch.tensor([p])).logits[0, -1].double(), -1)
            a, b = probs[list(words.first_ids)].sum().item(), probs[list(words.second_ids)].sum().item()
            out.append(a / (a + b))
    return np.array(out)


@pytest.mark.parametrize("first, second", PAIRS)
def test_label_probability_equals_the_softmax_share_of_the_first_tokens(tiny_lm, first, second):
    words = LabelWords.lookup(tiny_lm, first, second, leading_space=True)
    prompts = _prompts(tiny_lm)
    got = label_probability(tiny_lm, prompts, words)
    assert got.shape == (len(prompts),) and ((got > 0) & (got < 1)).all()
    assert_float32_close(got, _softmax_share(tiny_lm, prompts, words))  # batched against one at a time


def test_lookup_reads_each_spelling_and_skips_the_blank_word_boundary_piece(tiny_lm, tiny_sp_lm):
    words = LabelWords.lookup(tiny_lm, ("yes", "Yes"), ("no", "No"), leading_space=True)
    decode = tiny_lm.tokenizer.decode
    assert {decode([t]) for t in words.first_ids} == {"y", "Y"}  # " yes" starts with a bare space token
    assert {decode([t]) for t in words.second_ids} == {"n", "N"}
    assert words.candidates == words.first_ids + words.second_ids
    sp = LabelWords.lookup(tiny_sp_lm, "yes", "no")  # SentencePiece: "▁" alone, then "y"
    assert [tiny_sp_lm.tokenizer.decode([t]) for t in sp.candidates] == ["y", "n"]


def test_words_that_share_a_first_token_raise_an_error_naming_them(tiny_lm):
    with pytest.raises(LabelWordsError, match="words 'Yes' and 'YES' start with the same token 'Y'"):
        LabelWords.lookup(tiny_lm, "Yes", "YES")
    with pytest.raises(ValueError, match="'yes'/'Yes' and 'yeah'"):  # a ValueError for callers that catch those
        LabelWords.lookup(tiny_lm, ("yes", "Yes"), "yeah")


def test_a_word_the_tokenizer_cannot_spell_raises_an_error_naming_it(tiny_sp_lm):
    # the tiny SentencePiece vocabulary has no "Y": "Yes" starts with the unknown token
    with pytest.raises(LabelWordsError, match="label word 'Yes': no spelling starts with a known token"):
        LabelWords.lookup(tiny_sp_lm, "Yes", "no")


def test_pair_probability_is_the_two_way_share_in_log_space():
    assert pair_probability(0.0, 0.0) == 0.5
    assert pair_probability(np.log(0.3), np.log(0.1)) == pytest.approx(0.75)
    np.testing.assert_allclose(pair_probability([-1.0, -3.0], [-3.0, -1.0]), 1 / (1 + np.exp([-2.0, 2.0])))
    assert pair_probability(-1000.0, -1001.0) == pytest.approx(1 / (1 + np.exp(-1.0)))  # no underflow to 0/0
    assert pair_probability(-np.inf, -np.inf) == 0.5  # no mass on either word
    assert pair_probability(-np.inf, -2.0) == 0.0 and pair_probability(-2.0, -np.inf) == 1.0


def test_p_true_and_the_judges_read_their_words_through_label_words(tiny_lm):
    from franq.faithfulness.chat_judge import LMJudgeFaithfulness
    from franq.equivalence.lm_judge import LMJudge
    from franq.evaluation.p_true import PTrue

    decode = tiny_lm.tokenizer.decode
    assert [decode([t]) for t in PTrue(tiny_lm).candidates] == ["T", "F"]
    assert LMJudge(tiny_lm).labels.first == ("yes", "Yes")
    assert LMJudgeFaithfulness(tiny_lm).labels.second == ("no", "No", "NO")
