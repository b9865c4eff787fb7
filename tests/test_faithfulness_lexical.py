"""Lexical support backend."""
from __future__ import annotations

from franq.faithfulness.lexical import LexicalFaithfulness

CONTEXT = ("The Eiffel Tower was built from 1887 to 1889 by Gustave Eiffel's company.\n\n"
           "Paris is the capital and largest city of France.")


def test_supported_claim_scores_higher_than_unsupported():
    backend = LexicalFaithfulness()
    p = backend.predict([(CONTEXT, "The Eiffel Tower was built from 1887 to 1889."),
                         (CONTEXT, "The Eiffel Tower is made of solid gold."),
                         (CONTEXT, "Bananas grow in Ecuador.")])
    assert p[0] == 1.0 and 0 < p[1] < 0.7 and p[2] == 0.0


def test_a_changed_number_or_name_costs_more_than_a_common_word():
    backend = LexicalFaithfulness()
    wrong_year, wrong_word = backend.predict([
        (CONTEXT, "The Eiffel Tower was built from 1887 to 1899."),
        (CONTEXT, "The Eiffel Tower was erected from 1887 to 1889."),
    ])
    assert wrong_year < wrong_word < 1.0


def test_far_apart_words_do_not_count_as_support():
    filler = " ".join(["lorem"] * 200)
    context = f"Paris {filler} capital {filler} France"
    near = "Paris is the capital of France."
    far, close = LexicalFaithfulness().predict([(context, near), (near, near)])
    assert far <= 0.5 < close == 1.0
