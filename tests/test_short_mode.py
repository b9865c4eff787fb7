"""FRANQ short-form mode on the tiny model: one claim, samples, judge, mix, modes, CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import make_franq
from franq.equivalence.normalized import NormalizedAnswerJudge, normalize_answer
from franq.presets import is_short_answer
from franq.presets import check_config

PASSAGES = ["The Eiffel Tower is in Paris, France.", "Gustave Eiffel designed the tower."]
QUESTION = "Where is the Eiffel Tower?"


SHORT_SIGNALS = {"p_semantic_entropy", "u_semantic_entropy", "u_eigval", "u_degree_matrix", "u_eccentricity",
                 "u_lexical_similarity"}


class RecordingFaithfulness:
    name = "recording"
    needs = frozenset()

    def __init__(self, value=0.7):
        self.value, self.pairs = value, []

    def predict(self, pairs, evidence=None):
        self.pairs += list(pairs)
        return np.full(len(pairs), self.value)


def _franq(lm, faith, **uq):
    return make_franq(lm, {"uq": {"n_samples": 4, "max_sample_tokens": 6, **uq}}, faithfulness=faith)


def test_short_mode_scores_whole_answer_as_one_claim(tiny_lm):
    faith = RecordingFaithfulness(0.7)
    res = _franq(tiny_lm, faith, short_scoring="in_policy").score(QUESTION, PASSAGES, " Paris, France. ", mode="short")
    assert res.mode == "short" and len(res.claims) == 1
    c = res.claims[0]
    assert c.status == "scored" and c.claim.text == "Paris, France."
    assert c.claim.char_spans == ((1, 15),)
    assert c.p_true_raw == pytest.approx(0.7 * c.uq_faith + 0.3 * c.uq_unfaith)
    # UQ_faith on the mix's scale (issue 27): exp(-SE) of length-normalized, renormalized class
    # masses; the paper's raw SE stays a signal (its exp is ~0 for multi-token samples)
    assert c.uq_faith == pytest.approx(c.signals["p_semantic_entropy"]) and 0 < c.uq_faith <= 1
    assert np.exp(-c.signals["u_semantic_entropy"]) < c.uq_faith
    assert c.uq_unfaith == pytest.approx(1 / c.signals["u_eigval"])
    assert set(c.signals) == SHORT_SIGNALS  # every declared signal of the preset's scorers, nothing else
    assert c.p_true_calibrated is None and res.calibration == "none"
    assert res.stack["equivalence"] == "normalized-v1" and res.stack["sampling"].startswith("n=4,")


def test_short_mode_faithfulness_sees_question_plus_answer(tiny_lm):
    faith = RecordingFaithfulness()
    _franq(tiny_lm, faith).score(QUESTION, PASSAGES, "Paris.", mode="short")
    context, claim = faith.pairs[-1]
    assert claim == f"{QUESTION} Paris."
    assert "Gustave Eiffel" in context


@pytest.mark.parametrize("value, branch", [(1.0, "uq_faith"), (0.0, "uq_unfaith")])
def test_short_mode_mix_follows_faithfulness(tiny_lm, constant_faithfulness, value, branch):
    res = _franq(tiny_lm, constant_faithfulness(value)).score(QUESTION, PASSAGES, "Paris", mode="short")
    c = res.claims[0]
    assert c.p_true_raw == pytest.approx(getattr(c, branch))


def test_short_mode_is_reproducible_and_closed_book_option_changes_unfaith_samples(tiny_lm):
    faith = RecordingFaithfulness()
    a = _franq(tiny_lm, faith).score(QUESTION, PASSAGES, "Paris", mode="short")
    b = _franq(tiny_lm, faith).score(QUESTION, PASSAGES, "Paris", mode="short")
    assert a == b
    closed = _franq(tiny_lm, faith, unfaith_samples="closed").score(QUESTION, PASSAGES, "Paris", mode="short")
    assert closed.claims[0].uq_faith == a.claims[0].uq_faith


def test_auto_mode_sends_single_short_sentence_to_short_form(tiny_lm):
    f = _franq(tiny_lm, RecordingFaithfulness())
    from franq.io import Example
    from franq.types import Passage

    ps = tuple(Passage(p) for p in PASSAGES)
    res = f.score_many([Example(QUESTION, ps, "Paris."),
                        Example(QUESTION, ps, "It is in Paris. Gustave Eiffel designed it in 1887.")], mode="auto")
    assert [r.mode for r in res] == ["short", "long"]
    assert f.score(QUESTION, PASSAGES, "Paris.").mode == "long"  # default stays long-form


def test_is_short_answer():
    assert is_short_answer("Paris, France.")
    assert is_short_answer("1889")
    assert not is_short_answer("Paris. It is in France.")
    assert not is_short_answer("a b c d e f g h i j k l m n o p q")
    assert not is_short_answer("Paris\nFrance")


def test_unknown_mode_error_names_mode(tiny_lm):
    with pytest.raises(ValueError, match="mode"):
        _franq(tiny_lm, RecordingFaithfulness()).score(QUESTION, PASSAGES, "Paris", mode="tiny")


def test_answer_in_short_mode_generates_one_line(tiny_lm):
    res = _franq(tiny_lm, RecordingFaithfulness()).answer(QUESTION, PASSAGES, mode="short")
    assert res.mode == "short" and "\n" not in res.answer and len(res.claims) == 1


def test_normalized_judge_equivalence_and_entailment():
    j = NormalizedAnswerJudge()
    m = j.entailment("q", ["Paris", "paris.", "Paris, France", "Lyon"])
    assert m[0, 1] == m[1, 0] == 1.0
    assert m[2, 0] == 1.0 and m[0, 2] == 0.5
    assert m[0, 3] == 0.0 and np.all(np.diag(m) == 1.0)
    assert normalize_answer("The  Eiffel-Tower!") == "eiffel tower"


def test_lm_judge_gives_symmetric_probabilities(tiny_lm):
    from franq.equivalence.lm_judge import LMJudge

    m = LMJudge(tiny_lm).entailment("Where?", ["Paris", "Lyon", "Paris", "Nice"])
    assert m.shape == (4, 4) and np.allclose(m, m.T)
    assert ((0 <= m) & (m <= 1)).all() and m[0, 2] == 1.0


def test_cli_score_mode_short(tiny_lm_path):
    from franq.cli import main

    r = CliRunner().invoke(main, ["score", "--model", str(tiny_lm_path), "-q", QUESTION, "-p", PASSAGES[0],
                                  "-a", "Paris", "--mode", "short", "--format", "json"])
    assert r.exit_code == 0, r.output
    rec = json.loads(r.output)
    assert rec["mode"] == "short" and len(rec["claims"]) == 1


def test_config_rejects_unknown_judge():
    from franq.config import FranqConfig
    from franq.errors import InputError

    with pytest.raises(InputError, match="'uq.equivalence': unknown equivalence judge 'gpt'"):
        check_config(FranqConfig.from_dict({"uq": {"equivalence": "gpt"}}))


def test_normalized_judge_ignores_words_repeated_from_the_question():
    m = NormalizedAnswerJudge().entailment("who sang heard it through the grapevine first",
                                           ["Marvin Gaye sang it first.", "Marvin Gaye", "Gladys Knight"])
    assert m[0, 1] == m[1, 0] == 1.0
    assert m[0, 2] == m[2, 1] == 0.0
