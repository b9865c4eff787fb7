"""Methods of papers 000 / 003 a reproducer looks for, on hand-computed cases."""
from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import assert_float32_close
from franq.apps.answering import decision_metrics as M
from franq.apps.answering.items import QAItem
from franq.apps.answering.paper_methods import (
    IntrinsicAbstentionCheck, PromptNLIBackend, SampledPTrueCheck, confidence_percentile,
    dual_perplexity_scores, is_refusal, sampled_p_true,
)
from franq.apps.answering.policy import SelectivePolicy, load_policy
from franq.apps.answering.verify import DualGenerationCheck
from franq.lm.prompts import SHORT_INSTRUCTION
from franq.types import Passage

PASSAGES = (Passage("The Eiffel Tower was finished in 1889.", "Eiffel Tower"),)


# ---------------------------------------------------------------- intrinsic abstention (000 4.1)
def test_intrinsic_abstention_reads_the_generators_refusal():
    answers = ["__DONT_KNOW__", "1889", "I don't know.", "", "DONT KNOW", "It opened in 1889."]
    items = [QAItem("When?", PASSAGES, answer=a) for a in answers]
    v = IntrinsicAbstentionCheck().predict(items)
    assert v.tolist() == [0, 1, 0, 0, 0, 1]
    assert is_refusal("The answer is unanswerable from the context") and not is_refusal("Knowledge is power")
    # a hard label: 000 Table 7's AUC is precision x recall. V (faithful) for answers 2 and 6, all answerable
    V, S = [0, 1, 0, 0, 0, 1], [1] * 6
    assert M.pr_auc(v, V, S) == pytest.approx(1.0 * 2 / 6)  # precision 2/2, recall 2 / F-Answerable 6
    assert M.pr_auc(v, [0, 1, 0, 0, 0, 0], S) == pytest.approx(1 / 2 * 1 / 6)


def test_intrinsic_abstention_generates_with_000s_prompt(tiny_lm):
    verifier = IntrinsicAbstentionCheck(tiny_lm, max_new_tokens=3)
    v = verifier.predict([QAItem("When?", PASSAGES)])
    assert len(verifier.answers) == 1 and v.tolist() == [0.0 if is_refusal(verifier.answers[0]) else 1.0]


# ---------------------------------------------------------------- dual generation (000 4.1, Wu et al.)
def test_dual_generation_perplexity_difference_percentiles_and_pick_by_hand():
    # mean log-probs -> perplexities: RAG [2, 4], closed book [4, 2]
    d = dual_perplexity_scores([math.log(0.5), math.log(0.25)], [math.log(0.25), math.log(0.5)])
    assert d.ppl_rag == pytest.approx([2, 4]) and d.ppl_closed == pytest.approx([4, 2])
    assert d.difference == pytest.approx([2, -2])  # closed minus RAG: 000's decision function
    # percentile = share of the set's perplexities at least as high: RAG 2 -> 2/2, 4 -> 1/2
    assert d.pct_rag.tolist() == [1.0, 0.5] and d.pct_closed.tolist() == [0.5, 1.0]
    assert d.picks_rag.tolist() == [True, False]
    # against a reference set (e.g. a calibration set): ppl 3 among [1, 2, 4, 5] -> 2/4 are >= 3
    assert confidence_percentile([3.0, 0.5, 6.0], [1, 2, 4, 5]).tolist() == [0.5, 1.0, 0.0]


def test_dual_check_scores_and_picks_the_answer(tiny_lm):
    items = [QAItem("When was it finished?", PASSAGES, answer="1889", closed_answer="in 1900"),
             QAItem("Where is it?", PASSAGES, answer="Paris", closed_answer="Rome")]
    dual = DualGenerationCheck(tiny_lm, max_new_tokens=4)
    s = dual.predict(items)
    pairs = []
    for it in items:
        pairs += [(tiny_lm.rag_prompt(it.question, it.passages, reserve=len(tiny_lm.encode(it.answer)),
                                      instruction=SHORT_INSTRUCTION).ids, tiny_lm.encode(it.answer)),
                  (tiny_lm.closed_book_prompt(it.question, instruction=SHORT_INSTRUCTION).ids,
                   tiny_lm.encode(it.closed_answer))]
    m = [lp.mean() for lp in tiny_lm.continuation_logprobs(pairs)]
    assert s == pytest.approx([math.exp(-m[1]) - math.exp(-m[0]), math.exp(-m[3]) - math.exp(-m[2])], rel=1e-4)
    picks = dual.last.picks_rag
    assert dual.picked == [it.answer if p else it.closed_answer for it, p in zip(items, picks)]
    logp = DualGenerationCheck(tiny_lm, score="log_prob").predict(items)
    assert_float32_close(logp, [m[0] - m[1], m[2] - m[3]])
    assert np.sign(logp).tolist() == np.sign(s).tolist()  # the same decision at threshold 0
    pct = DualGenerationCheck(tiny_lm, score="percentile").predict(items)
    assert pct == pytest.approx(dual.last.pct_rag - dual.last.pct_closed)


# ---------------------------------------------------------------- P(True) as 003 samples it
def test_sampled_p_true_is_the_share_of_true_judgements():
    rng = np.random.default_rng(0)
    # 20 answers: 15 the model judges True for sure, 5 False for sure -> 75 of 100 judgements True
    assert sampled_p_true([1.0] * 15 + [0.0] * 5, 5, rng) == 0.75
    draws = [sampled_p_true([0.3] * 20, 5, np.random.default_rng(s)) for s in range(200)]
    assert np.mean(draws) == pytest.approx(0.3, abs=0.01)  # expectation: the mean probability
    assert all(abs(round(d * 100) - d * 100) < 1e-9 for d in draws)  # multiples of 1/100


class _LM:
    name = "fake"

    def __init__(self):
        self.calls = []

    def rag_prompt(self, question, passages, **kw):
        return SimpleNamespace(ids=(1, 2, 3))

    def sample(self, ids, n, **kw):
        self.calls.append((n, kw))
        return SimpleNamespace(samples=[SimpleNamespace(text="yes" if i < 12 else "no") for i in range(n)])


class _Labeler:
    name = "fake"

    def probability(self, messages_list, labels):
        self.n = len(messages_list)
        return np.array([1.0 if m[-1]["content"].endswith("yes") or m[-2]["content"] == "yes" else 0.0
                         for m in messages_list])


def test_sampled_p_true_check_draws_20_answers_and_5_judgements_each():
    lm, lab = _LM(), _Labeler()
    v = SampledPTrueCheck(lm, lab)
    assert v.predict([QAItem("Q?", PASSAGES)]).tolist() == [12 / 20]  # 12 of 20 answers judged True 5 times
    assert lm.calls[0][0] == 20 and lm.calls[0][1]["temperature"] == 1.0 and lab.n == 20
    assert v.samples[0].count("yes") == 12
    paper = SampledPTrueCheck(lm, lab, n_samples=4, prompt="paper")
    assert paper.predict([QAItem("Q?", PASSAGES)]).tolist() == [1.0]
    assert paper.judge_messages(QAItem("Q?", PASSAGES), "A")[0]["content"].startswith("Your task is to judge")


# ---------------------------------------------------------------- 000 A.3 prompt-based NLI
def test_prompt_nli_reads_p_of_1(tiny_lm):
    backend = PromptNLIBackend(tiny_lm)
    pairs = [("The tower was finished in 1889.", "The tower was finished in 1889."), ("A cat.", "A dog.")]
    p = backend.predict(pairs)
    from franq.apps.answering.prompts import nli_prompt_messages
    from franq.lm.prompts import chat_text

    ids = [tiny_lm.encode(chat_text(tiny_lm.tokenizer, nli_prompt_messages(*pr),
                                    fallback="\n\n".join(m["content"] for m in nli_prompt_messages(*pr)) + " "))
           for pr in pairs]
    lp = tiny_lm.next_token_logprobs(ids, backend.words.first_ids)
    assert p == pytest.approx(np.exp(np.logaddexp.reduce(lp, axis=1)), rel=1e-6)
    q = PromptNLIBackend(tiny_lm, pair=True).predict(pairs)
    assert np.all((q > 0) & (q < 1)) and np.all(q >= p - 1e-12)  # p1 / (p1 + p0) >= p1


# ---------------------------------------------------------------- 000 E.3 XGBoost 3-fold combiner
def _separable(n=30):
    y = np.array([i % 2 for i in range(n)])
    rows = [{"nli": float(y[i]), "suff": float(i % 3)} for i in range(n)]
    return rows, y


def test_xgboost_combiner_three_folds_and_json_round_trip(tmp_path):
    rows, y = _separable()
    policy = SelectivePolicy.fit(rows, y, features=["nli", "suff"], coverage=0.5, combiner="xgboost", n_boot=50)
    assert policy.cv["k"] == 3 and policy.cv["combiner"] == "xgboost"
    # the signal separates the classes: the out-of-fold top half is all correct
    assert M.accuracy_at_coverage(policy.out_of_fold, y, 0.5) == 1.0
    assert policy.cv["oof_accuracy_at_coverage"] == 1.0
    policy.to_json(tmp_path / "p.json")
    assert isinstance(json.loads((tmp_path / "p.json").read_text())["model"], dict)  # xgboost JSON, no pickle
    back = load_policy(tmp_path / "p.json")
    assert back.combiner == "xgboost"
    assert back.probability(rows) == pytest.approx(policy.probability(rows))
    assert back.answers(rows[1]) and not back.answers(rows[0])
    logistic = SelectivePolicy.fit(rows, y, features=["nli"], n_boot=50)
    assert logistic.cv["k"] == 5 and logistic.combiner == "logistic"


def test_selective_fit_cli_combiner_xgboost(tmp_path):
    from franq.cli import main

    rows, y = _separable()
    path = tmp_path / "signals.jsonl"
    path.write_text("".join(json.dumps({**r, "correct": int(c)}) + "\n" for r, c in zip(rows, y)))
    out = CliRunner().invoke(main, ["selective", "fit", str(path), "-o", str(tmp_path / "s.json"),
                                    "--features", "nli,suff", "--combiner", "xgboost"])
    assert out.exit_code == 0, out.output
    assert load_policy(tmp_path / "s.json").cv["k"] == 3


def test_new_checks_are_registered_by_name(make_franq, tiny_lm):
    from franq.apps.answering.decide import build_check

    franq = make_franq(tiny_lm, {"checks": {"dual": {"score": "percentile"},
                                               "p_true_sampled": {"n_samples": 3}}})
    assert isinstance(build_check("intrinsic", franq, "short"), IntrinsicAbstentionCheck)
    assert build_check("dual", franq, "short").score == "percentile"
    assert build_check("dual", make_franq(tiny_lm), "short").score == "perplexity"
    assert build_check("p_true_sampled", franq, "short").n_samples == 3
    assert build_check("p_true_sampled", make_franq(tiny_lm), "short").n_judgements == 5
    assert build_check("nli_prompt", franq, "short").name.startswith("nli:prompt_nli:")
