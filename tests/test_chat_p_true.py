"""The chat-model P(True) scorer (issue 46.4) against a local OpenAI-compatible server with
pinned replies, through the real ``openai`` client: the prompt it sends, P(True) read from
the first token's top_logprobs over True/False spellings, the one-line refusal naming the
server when no log-probabilities come back, retries, concurrency, and the config path
``[uq.long] unfaith = "chat_p_true"`` with its own ``[scorers.chat_p_true]`` table."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from conftest import make_franq
from servers import ChatHandler, chat_completion, chat_server

from claims.types import Claim
from franq.config import FranqConfig
from franq.errors import FranqError, InputError
from franq.scorers.chat_p_true import TEMPLATE, ChatPTrueScorer
from franq.stages.record import ClaimEvidence


def _top(pairs):
    """One-token ``logprobs`` content with these (token, probability) alternatives."""
    top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in pairs]
    return {"content": [{"token": pairs[0][0], "logprob": math.log(pairs[0][1]), "bytes": None, "top_logprobs": top}]}


class _Pinned(ChatHandler):
    """Replies by claim text (``server.replies``: claim -> top alternatives, or None for no
    logprobs), whatever order the requests come in; ``server.fail_first`` requests get a 500
    first; with ``server.hold`` set, no reply leaves before two requests are open at once
    (``server.both_open``; a scorer that asks one at a time is answered after 30 s, so the
    test fails instead of hanging)."""

    def do_POST(self):
        body = self.read_body()
        srv = self.server
        with srv.lock:
            srv.requests.append(body)
            srv.open += 1
            srv.max_open = max(srv.max_open, srv.open)
            if srv.open >= 2:
                srv.both_open.set()
            fail = srv.fail_first > 0
            srv.fail_first -= fail
        try:
            if srv.hold:
                srv.both_open.wait(30)
            if fail:
                self.send_json(500, {"error": {"message": "overloaded", "type": "server_error"}})
                return
            prompt = body["messages"][-1]["content"]
            claim = prompt.split("Possible answer:", 1)[1].split("\n", 1)[0]  # the reply is looked up by content
            top = srv.replies.get(claim)
            self.send_json(200, chat_completion(body["model"], "True", None if top is None else _top(top)))
        finally:
            with srv.lock:
                srv.open -= 1


REPLIES = {
    "Paris is in France.": [("True", 0.6), (" true", 0.2), ("False", 0.1), ("Maybe", 0.1)],
    "Paris is in Spain.": [("False", 0.7), ("FALSE", 0.1), ("True", 0.1)],
    "Nothing known.": [("Hmm", 0.9), ("Well", 0.1)],
}


@pytest.fixture
def server():
    with chat_server(_Pinned, replies=dict(REPLIES), fail_first=0, hold=False, both_open=threading.Event(), open=0,
                     max_open=0, lock=threading.Lock()) as srv:
        yield srv


def _batch(*claims, question="Where is Paris?"):
    return [ClaimEvidence.of(Claim(c, ((0, len(c)),)), question=question) for c in claims]


def _scorer(server, **kw):
    return ChatPTrueScorer("tiny-chat", base_url=server.base_url, api_key_env="FRANQ_TEST_KEY", **kw)


def test_p_true_from_top_logprobs_over_spellings(server):
    scorer = _scorer(server)
    out = scorer.score(_batch("Paris is in France.", "Paris is in Spain.", "Nothing known."))
    p = out["p_true_chat"]
    assert p[0] == pytest.approx(0.8 / 0.9)      # True + " true" over True/False spellings
    assert p[1] == pytest.approx(0.1 / 0.9)      # False + FALSE count against
    assert p[2] == 0.5                           # neither among the alternatives
    sent = {b["messages"][-1]["content"]: b for b in server.requests}  # concurrent: any order
    body = sent[TEMPLATE.format(question="Where is Paris?", claim="Paris is in France.")]
    assert body["max_tokens"] == 1 and body["temperature"] == 0 and body["logprobs"] is True
    assert body["top_logprobs"] == 20 and body["model"] == "tiny-chat"
    assert len(server.requests) == 3  # one request per claim
    assert scorer.usage == {"requests": 3, "prompt_tokens": 3 * 42, "completion_tokens": 3 * 7}  # as the server said


def test_no_logprobs_is_refused_in_one_line_naming_the_server(server):
    server.replies["Plain."] = None
    with pytest.raises(FranqError) as err:
        _scorer(server).score(_batch("Plain."))
    msg = str(err.value)
    assert "\n" not in msg and server.base_url in msg and "tiny-chat" in msg and "log-probabilities" in msg


def test_a_failed_request_is_retried_by_the_client(server):
    server.fail_first = 1
    out = _scorer(server, max_retries=2).score(_batch("Paris is in France."))
    assert out["p_true_chat"][0] == pytest.approx(0.8 / 0.9)
    assert len(server.requests) == 2


def test_requests_run_concurrently_and_repeats_are_asked_once(server):
    server.hold = True  # no reply before two requests are open: answers come back in any order
    claims = ["Paris is in France.", "Paris is in Spain.", "Nothing known.", "Paris is in France."]
    out = _scorer(server, concurrency=3).score(_batch(*claims))
    assert len(server.requests) == 3 and server.max_open >= 2
    p = out["p_true_chat"]  # each claim's own reply, in the batch's order
    assert p[0] == p[3] == pytest.approx(0.8 / 0.9) and p[1] == pytest.approx(0.1 / 0.9) and p[2] == 0.5


def test_config_table_and_pipeline(server, tiny_lm):
    cfg = {"uq": {"long": {"faith": "claim_prob", "unfaith": "chat_p_true"}},
           "scorers": {"chat_p_true": {"model": "tiny-chat", "base_url": server.base_url,
                                       "api_key_env": "FRANQ_TEST_KEY", "concurrency": 2}}}
    fr = make_franq(tiny_lm, cfg)
    res = fr.score("Where is Paris?", ["Paris is the capital of France."], "Paris is in France. Paris is in Spain.")
    scored = [c for c in res.claims if c.status == "scored"]
    assert scored and res.stack["uq_unfaith"] == "chat_p_true:tiny-chat"  # the model is part of the stack
    by_text = {c.claim.text: c for c in scored}
    assert by_text["Paris is in France."].uq_unfaith == pytest.approx(0.8 / 0.9)
    assert by_text["Paris is in France."].signals["p_true_chat"] == pytest.approx(0.8 / 0.9)
    assert np.isfinite([c.p_true_raw for c in scored]).all()
    sent = [m["content"] for b in server.requests for m in b["messages"]]
    assert len(server.requests) == len({c.claim.text for c in scored})  # one request per claim
    assert not any("capital" in text for text in sent)  # the knowledge term: asked without the passages


def test_missing_model_and_bad_settings_name_the_key():
    with pytest.raises(InputError, match=r"scorers\.chat_p_true\.model.*required"):
        from franq.presets import check_config
        check_config(FranqConfig.from_dict({"uq": {"long": {"unfaith": "chat_p_true"}}}))
    from franq.presets import check_config
    bad = FranqConfig.from_dict({"uq": {"long": {"unfaith": "chat_p_true"}},
                                 "scorers": {"chat_p_true": {"model": "m", "concurrency": 0}}})
    with pytest.raises(InputError, match=r"scorers\.chat_p_true\.concurrency"):
        check_config(bad)


def test_the_faith_term_asks_with_the_passages_and_both_terms_come_from_the_chat_model(server, tiny_lm):
    table = {"model": "tiny-chat", "base_url": server.base_url, "api_key_env": "FRANQ_TEST_KEY"}
    cfg = {"uq": {"long": {"faith": "chat_p_true_rag", "unfaith": "chat_p_true"}},
           "scorers": {"chat_p_true": table, "chat_p_true_rag": {**table, "concurrency": 2}}}
    fr = make_franq(tiny_lm, cfg)
    res = fr.score("Where is Paris?", [{"title": "Paris", "text": "Paris is the capital of France."}],
                   "Paris is in France. Paris is in Spain.")
    by_text = {c.claim.text: c for c in res.claims if c.status == "scored"}
    assert res.stack["uq_faith"] == "chat_p_true_rag:tiny-chat" and res.stack["uq_unfaith"] == "chat_p_true:tiny-chat"
    france, spain = by_text["Paris is in France."], by_text["Paris is in Spain."]
    assert france.uq_faith == france.uq_unfaith == pytest.approx(0.8 / 0.9)
    assert spain.signals["p_true_chat_rag"] == pytest.approx(0.1 / 0.9)
    with_passages = [b["messages"][-1]["content"] for b in server.requests if "Passages:" in b["messages"][-1]["content"]]
    assert len(with_passages) == 2 and len(server.requests) == 4  # each claim asked with and without
    assert with_passages[0].startswith("Passages:\n[1] Paris\nParis is the capital of France.\n\nQuestion: Where is Paris?")
    assert all(TEMPLATE.format(question="Where is Paris?", claim=c) in " ".join(with_passages) for c in by_text)


def test_the_rag_variant_has_its_own_required_table():
    from franq.presets import check_config

    with pytest.raises(InputError, match=r"scorers\.chat_p_true_rag\.model.*required"):
        check_config(FranqConfig.from_dict({"uq": {"long": {"faith": "chat_p_true_rag"}}}))
    bad = FranqConfig.from_dict({"uq": {"long": {"faith": "chat_p_true_rag"}},
                                 "scorers": {"chat_p_true_rag": {"model": "m", "top_logprobs": 21}}})
    with pytest.raises(InputError, match=r"scorers\.chat_p_true_rag\.top_logprobs"):
        check_config(bad)


def test_a_calibrator_is_fitted_on_chat_scored_output(server, tiny_lm):
    # the stack names the model (chat_p_true:tiny-chat), and the scorer cannot be built without one
    import franq
    from franq.fit.training_claims import training_claims

    table = {"model": "tiny-chat", "base_url": server.base_url, "api_key_env": "FRANQ_TEST_KEY"}
    cfg = {"uq": {"long": {"faith": "chat_p_true_rag", "unfaith": "chat_p_true"}},
           "scorers": {"chat_p_true": table, "chat_p_true_rag": table}}
    fr = make_franq(tiny_lm, cfg)
    example = {"question": "Where is Paris?", "passages": ["Paris is the capital of France."],
               "answer": "Paris is in France. Paris is in Spain.",
               "claims": [{"text": "Paris is in France.", "is_true": True}, {"text": "Paris is in Spain.", "is_true": False}]}
    ex = franq.Example.from_dict(example)
    line = franq.result_record("a", fr.score(ex.question, ex.passages, ex.answer, claims=list(ex.claims)), ex)
    got = training_claims(franq.read_results([line], with_input=True))
    assert got.stack["uq_unfaith"] == "chat_p_true:tiny-chat"
    assert list(got.uq_unfaith) == pytest.approx([0.8 / 0.9, 0.1 / 0.9]) and list(got.is_true) == [1, 0]


def test_answers_of_a_failed_call_are_used_once_by_the_next_calls(server):
    server.replies["Plain."] = None  # refused: no log-probabilities
    scorer = _scorer(server)
    with pytest.raises(FranqError):
        scorer.score(_batch("Paris is in France.", "Plain."))
    assert len(server.requests) == 2
    again = scorer.score(_batch("Paris is in France."))  # the retry: answered from the failed call
    assert again["p_true_chat"][0] == pytest.approx(0.8 / 0.9) and len(server.requests) == 2
    scorer.score(_batch("Paris is in France."))  # used once: a later call asks again
    assert len(server.requests) == 3 and not scorer._kept
