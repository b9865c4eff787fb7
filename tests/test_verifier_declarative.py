"""Declarative question-answer claims for the verifier (franq.fit.verifier.qa):
the question said as a statement with an answer in it, and the pairs built from them."""
import random

from franq.fit.verifier.qa import declarative_pairs, statement


def _tags(text: str) -> list[tuple[str, str]]:
    """Penn tags of the few words these questions use, as spaCy's tagger reads them."""
    tag = {"who": "WP", "what": "WP", "when": "WRB", "where": "WRB", "how": "WRB", "many": "JJ", "did": "VBD",
           "does": "VBZ", "is": "VBZ", "was": "VBD", "wrote": "VBD", "fall": "VB", "built": "VBN", "located": "VBN",
           "team": "NN", "won": "VBD", "countries": "NNS", "are": "VBP", "sing": "VB", "start": "VB"}
    return [(w, tag.get(w, "NN")) for w in text.split()]


def test_statement_reads_the_common_question_forms():
    cases = {
        ("who wrote pride and prejudice", "Jane Austen"): "Jane Austen wrote pride and prejudice.",
        ("when did the berlin wall fall", "1989"): "The berlin wall fell in 1989.",
        ("when did the berlin wall fall", "9 November 1989"): "The berlin wall fell on 9 November 1989.",
        ("when was the eiffel tower built", "1889"): "The eiffel tower was built in 1889.",
        ("where is the eiffel tower located", "Paris"): "The eiffel tower is located in Paris.",
        ("where is the eiffel tower located", "near the Seine"): "The eiffel tower is located near the Seine.",
        ("where is the colosseum", "Rome"): "The colosseum is in Rome.",
        ("who is the president of france", "Emmanuel Macron"): "Emmanuel Macron is the president of france.",
        ("what is the capital of australia", "Canberra"): "Canberra is the capital of australia.",
        ("what team won the 2010 world cup", "Spain"): "Spain won the 2010 world cup.",
        ("how many countries are in opec", "14"): "14 countries are in opec.",
        ("how many countries are in opec", "14 countries"): "14 countries are in opec.",
        ("when does the show start", "June"): "The show starts in June.",
    }
    for (question, answer), want in cases.items():
        assert statement(question, _tags(question), answer) == want, question
    assert statement("the south wind blows across nigeria between", _tags("the south wind"), "June") is None
    assert statement("who", _tags("who"), "x") is None


class _Tagger:
    def pipe(self, texts, batch_size=128):
        for t in texts:
            yield [type("T", (), {"text": w, "tag_": g})() for w, g in _tags(t)]


def test_declarative_pairs_are_supported_contradicted_and_not_mentioned():
    rows = [{"id": f"q{i}", "question": q, "answers": [a], "passage": p} for i, (q, a, p) in enumerate([
        ("who wrote pride and prejudice", "Jane Austen",
         "Pride and Prejudice is an 1813 novel. It was written by Jane Austen. It is a novel of manners."),
        ("who wrote great expectations", "Charles Dickens",
         "Great Expectations is a novel. Its author is Charles Dickens. It was published in 1861."),
        ("who wrote war and peace", "Leo Tolstoy",
         "War and Peace is a novel by Leo Tolstoy. It was published in 1869. It is very long."),
    ])]
    typed = {"PERSON": rows}
    kinds = {r["id"]: "PERSON" for r in rows}
    pairs = declarative_pairs(rows, nlp=_Tagger(), rng=random.Random(0), window_words=40, typed=typed, kinds=kinds)
    by = {(p["label"], p["claim"]) for p in pairs}
    assert (0, "Jane Austen wrote pride and prejudice.") in by
    wrong = [p for p in pairs if p["label"] == 1]
    assert wrong and all(p["how"] == "wrong-answer" for p in wrong)
    for p in wrong:  # another question's answer, against the passage that names the right one
        assert "Jane Austen" in p["premise"] or "Dickens" in p["premise"] or "Tolstoy" in p["premise"]
        assert not any(a in p["claim"] and a in p["premise"] for a in ("Jane Austen", "Charles Dickens", "Leo Tolstoy"))
    for p in (p for p in pairs if p["label"] == 2):
        gold = next(r["answers"][0] for r in rows if r["answers"][0] in p["claim"])
        assert gold not in p["premise"]
