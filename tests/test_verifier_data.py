"""The verifier's training data: windows, SNLI detokenizing, typed corruptions."""
import random

from franq.fit.verifier_corrupt import Corruptor
from franq.fit.verifier_data import detok, sentences, window_around, windows


def test_windows_cover_every_sentence_with_overlap():
    sents = [f"Sentence number {i} has five words." for i in range(10)]
    ws = windows(sents, window_words=15)
    assert ws[0][0] == 0 and ws[-1][1] == 10
    assert all(b[0] == a[1] - 1 for a, b in zip(ws, ws[1:]))  # one sentence shared
    assert all(sum(len(s.split()) for s in sents[i:j]) <= 15 or j - i == 1 for i, j in ws)


def test_window_around_contains_its_sentence():
    sents = sentences("One two three. Four five six. Seven eight nine. Ten eleven twelve.")
    for k in range(len(sents)):
        i, j = window_around(sents, k, 6, random.Random(k))
        assert i <= k < j


def test_snli_detokenized():
    assert detok("Two women are n't embracing . ") == "Two women aren't embracing."


def test_corruptions_change_one_fact():
    c = Corruptor(None, None, random.Random(0))
    assert c._negation("The tower is located in Paris.", None) == "The tower is not located in Paris."
    assert c._negation("It was not built in 1889.", None) == "It was built in 1889."
    year = c._year("It was built in 1889.", None)
    assert year != "It was built in 1889." and year.startswith("It was built in 1")
    number = c._number("It is 330 metres tall.", None)
    assert number != "It is 330 metres tall." and number.endswith(" metres tall.")
    assert c._number("No digits here.", None) is None
