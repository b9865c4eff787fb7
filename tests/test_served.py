"""Scoring with a served model (franq.lm.served), without network: the engine adapters
against the request / response shapes pinned in tests/fixtures/served, and the whole
pipeline against a fake server per protocol whose numbers come from the in-process tiny
model (so the served passes must equal the local ones). The tiny model's tokenizer names
<|im_start|> its BOS token, as SmolLM2's GGUF does (llama-cpp-python's echo needs one)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import assert_float32_close, franq_config, make_franq
from franq.errors import InputError
from franq.lm.served import connect, engines
from franq.lm.served.base import ScoreItem, SampleParams
from franq.lm.served.client import Request, ServerClient, ServerUnavailable
from franq.lm.served.model import WhiteBoxError
from franq.presets import check_config
from served_fakes import KINDS, FakeServer, PinnedClient, PinnedTokenizer, fixture

QUESTION = "What is the capital of France?"
PASSAGES = ["Paris is the capital of France.", "The Eiffel Tower is in Paris."]
ANSWER = "Paris is the capital of France. The tower was built by Gustave Eiffel."


@pytest.fixture(scope="module")
def bos_lm_path(tiny_lm_path, tmp_path_factory):
    import shutil

    from transformers import AutoTokenizer

    path = tmp_path_factory.mktemp("tiny-bos") / "lm"
    shutil.copytree(tiny_lm_path, path)
    tok = AutoTokenizer.from_pretrained(path)
    tok.add_special_tokens({"bos_token": "<|im_start|>"})  # named, not added by encode: SmolLM2's setup
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def bos_lm(bos_lm_path):
    from franq.lm import CausalLM

    return CausalLM.load(str(bos_lm_path), device="cpu")


def served_config(path, kind, **more):
    model = {"server": "http://127.0.0.1:8000", "engine": kind, "tokenizer": str(path), **more.pop("model", {})}
    return franq_config({"model": model, **more})


def served_lm(path, server, kind, *, engine=None, needs_passes=True, **model):
    return connect(served_config(path, engine or kind, model=model).model, transport=server.transport, backoff=0,
                   needs_passes=needs_passes)


# ---------------------------------------------------------------------------- the pinned shapes
@pytest.mark.parametrize("kind", KINDS)
def test_adapter_builds_the_pinned_request_and_reads_the_pinned_reply(kind):
    fx, engine = fixture(kind), engines()[kind]()
    if "setup" in fx:  # the start-up requests, replayed as the real server answered them
        engine.setup(PinnedClient(fx["setup"]["tokenize"]), PinnedTokenizer(fx["setup"]))
    item = ScoreItem(**{k: tuple(v) if k.endswith("ids") else v for k, v in fx["score"]["item"].items()})
    req = engine.score_request(item)
    assert {"method": req.method, "path": req.path, "payload": req.payload} == fx["score"]["request"]
    assert engine.read_score(fx["score"]["response"], item) == fx["score"]["logprobs"]
    p = SampleParams(**fx["sample"]["params"])
    reqs = engine.sample_requests(item.prompt_ids, item.prompt_text, p)
    assert [{"method": r.method, "path": r.path, "payload": r.payload} for r in reqs] == fx["sample"]["requests"]
    draws = engine.read_samples(fx["sample"]["responses"])
    assert [{"text": d.text, "logprobs": list(d.logprobs), "ids": None if d.ids is None else list(d.ids),
             "finish": d.finish} for d in draws] == fx["sample"]["draws"]


def _pinned_llama_cpp():
    fx = fixture("llama-cpp-python")
    engine = engines()["llama-cpp-python"]()
    engine.setup(PinnedClient(fx["setup"]["tokenize"]), PinnedTokenizer(fx["setup"]))
    return fx, engine


def _item(block):
    return ScoreItem(**{k: tuple(v) if k.endswith("ids") else v for k, v in block.items()})


def test_llama_cpp_echo_is_read_as_the_real_server_writes_it():
    """Recorded from llama-cpp-python 0.3.36 on the embedded GGUF: entry i of the echo is read
    at position i of the prompt with its BOS, so a prompt without a leading BOS comes back one
    token off (and without the generated token). The adapter sends the BOS in front, and its
    reading is the local float32 pass's up to the quantisation (Q4_1 weights, 8-bit activations)."""
    fx, engine = _pinned_llama_cpp()
    assert not engine.adds_bos and engine.bos_text == "<|im_start|>"  # SmolLM2's GGUF: add_bos_token false
    nb = fx["no_bos"]
    item = _item(nb["item"])
    assert engine.score_request(item).payload == nb["aligned"]["payload"]  # "<|im_start|>Paris is the capital"
    got = engine.read_score(nb["aligned"]["response"], item)
    assert np.max(np.abs(np.array(got) - nb["local_float32_logprobs"])) < 0.5
    unaligned = nb["unaligned"]["response"]
    lp = unaligned["choices"][0]["logprobs"]
    assert len(lp["tokens"]) == unaligned["usage"]["prompt_tokens"]  # the generated token fell out
    off = np.array(lp["token_logprobs"][-2:], dtype=float)  # what the adapter read before: ' the', ' capital'
    assert np.max(np.abs(off - nb["local_float32_logprobs"])) > 4  # one token off: not the tokens' own
    with pytest.raises(Exception, match="read the prompt as 4 tokens, the local tokenizer as 5"):
        engine.read_score(unaligned, item)
    score = fx["score"]
    assert score["item"]["prompt_ids"][0] == engine.bos_id  # a chat prompt starts with BOS: sent unchanged
    got = engine.read_score(score["response"], _item(score["item"]))
    assert score["response"]["usage"]["completion_tokens"] == 0  # the model stopped at once: no generated entry
    assert np.max(np.abs(np.array(got) - score["local_float32_logprobs"])) < 0.5


def test_llama_cpp_refuses_an_answer_tokenised_otherwise():
    fx, engine = _pinned_llama_cpp()
    score = fx["score"]
    a = score["item"]["answer_ids"]
    item = _item({**score["item"], "answer_ids": [a[0], a[1], a[3], a[2], a[4]]})  # 'Paris is capital the.'
    with pytest.raises(Exception, match="tokens of the answer are not the local tokenizer's from answer token 2 .*server \\[' the'"):
        engine.read_score(score["response"], item)


def _retokenised(response, merge: tuple[int, int] | None = None, split: tuple[int, str, str] | None = None):
    """The pinned reply as a server whose tokenizer merges two echo entries (``merge``: the
    first's index from the end) or splits one (``split``: index from the end, its two pieces)."""
    body = json.loads(json.dumps(response))
    lp = body["choices"][0]["logprobs"]
    toks, lps = lp["tokens"], lp["token_logprobs"]
    if merge:
        k = len(toks) + merge[0]
        toks[k:k + 2] = [toks[k] + toks[k + 1]]
        lps[k:k + 2] = [lps[k] + lps[k + 1]]
    if split:
        k = len(toks) + split[0]
        toks[k:k + 1] = list(split[1:])
        lps[k:k + 1] = [lps[k] * 0.25, lps[k] * 0.75]
    return body


def test_llama_cpp_answer_split_otherwise_shares_each_stretch_log_probability():
    """llama.cpp's pre-tokenizer may split the answer otherwise than the local tokenizer
    (SmolLM2: "\n\n" before a digit, one token there and two here). Each stretch between
    boundaries both share gets the server's log-probability of that stretch, spread evenly
    over the local tokens in it; everywhere else the entries are read one to one."""
    fx, engine = _pinned_llama_cpp()
    score = fx["score"]
    item = _item(score["item"])  # 'Paris', ' is', ' the', ' capital', '.'
    want = engine.read_score(score["response"], item)
    merged = engine.read_score(_retokenised(score["response"], merge=(-3,)), item)  # ' the capital' one token
    assert merged[:2] == want[:2] and merged[4] == want[4]
    assert merged[2] == merged[3] == pytest.approx((want[2] + want[3]) / 2)
    split = engine.read_score(_retokenised(score["response"], split=(-2, " cap", "ital")), item)
    assert split[:3] == want[:3] and split[4] == want[4]
    assert split[3] == pytest.approx(want[3])  # two server tokens for one local: their sum
    both = engine.read_score(_retokenised(_retokenised(score["response"], merge=(-5,)), split=(-2, " cap", "ital")),
                             item)  # 'Paris is' one token, ' capital' two
    assert both[0] == both[1] == pytest.approx((want[0] + want[1]) / 2)
    assert sum(both) == pytest.approx(sum(want))
    into_prompt = _retokenised(score["response"], merge=(-6,))  # '\nParis': the answer's first token in the prompt's
    with pytest.raises(Exception, match="from answer token 0 .*and the texts differ"):
        engine.read_score(into_prompt, item)


def test_llama_cpp_alignment_keeps_empty_pieces_and_refuses_what_it_cannot_read():
    """Pieces of a character split across tokens decode to nothing on both sides: they join
    the stretch beside them; an answer of nothing but such pieces, or a text the server's
    pieces do not end with, has no stretches to read."""
    from franq.lm.served.llama_cpp import _align

    assert _align(["x", "a", "b"], ["a", "b"]) == (1, [(1, slice(0, 1)), (1, slice(1, 2))])
    assert _align(["x", "ab", "c"], ["a", "b", "c"]) == (1, [(2, slice(0, 1)), (1, slice(1, 2))])
    assert _align(["x", "a", "", "b"], ["a", "b", ""]) == (1, [(1, slice(0, 1)), (2, slice(1, 3))])
    assert _align(["a", "b"], [""])[1] is None
    assert _align(["xa", "b"], ["a", "b"])[1] is None  # the answer's first character inside a prompt token
    assert _align(["x", "a", "c"], ["a", "b"])[1] is None


@pytest.mark.parametrize("adds_bos", [False, True])
def test_fake_llama_cpp_server_is_off_by_one_as_the_real_one(adds_bos, bos_lm, bos_lm_path):
    """The fake answers as the pinned real replies do: without a leading BOS, one entry per
    prompt token (none for the generated one); with it, the BOS dropped and the generated
    token last. Served passes equal the local ones whether or not the server adds BOS itself."""
    fx = fixture("llama-cpp-python")["no_bos"]
    server = FakeServer("llama-cpp-python", bos_lm)
    client = ServerClient("http://x", transport=server.transport)
    for key, entries in (("unaligned", lambda u: u["prompt_tokens"]),
                         ("aligned", lambda u: u["prompt_tokens"] - 1 + u["completion_tokens"])):
        real = fx[key]["response"]
        assert len(real["choices"][0]["logprobs"]["tokens"]) == entries(real["usage"])
        fake = client.post(Request("POST", "/v1/completions",
                                   {**fx[key]["payload"], "prompt": fx[key]["payload"]["prompt"].replace("Paris", "Q")}))
        assert len(fake["choices"][0]["logprobs"]["tokens"]) == entries(fake["usage"])
    server = FakeServer("llama-cpp-python", bos_lm, adds_bos=adds_bos)
    lm = served_lm(bos_lm_path, server, "llama-cpp-python")
    assert lm.engine.adds_bos is adds_bos
    items = [(bos_lm.encode("Paris is"), bos_lm.encode(" the capital")),
             (bos_lm.closed_book_prompt(QUESTION).ids, bos_lm.encode("Paris."))]
    got = lm.continuation_logprobs(items)
    bos = bos_lm.tokenizer.bos_token_id
    want = bos_lm.continuation_logprobs([([bos, *items[0][0]], items[0][1]), items[1]])  # BOS put before the first
    for a, b in zip(got, want, strict=True):
        assert_float32_close(a, b)


def test_llama_cpp_without_a_bos_token_is_refused_for_the_passes(tiny_lm, tiny_lm_path):
    server = FakeServer("llama-cpp-python", tiny_lm)
    with pytest.raises(InputError, match="names no BOS token and the server adds none"):
        connect(served_config(tiny_lm_path, "llama-cpp-python").model, transport=server.transport, backoff=0)
    lm = connect(served_config(tiny_lm_path, "llama-cpp-python").model,
                 transport=FakeServer("llama-cpp-python", tiny_lm, adds_bos=True).transport, backoff=0)
    assert lm.capabilities.prompt_logprobs is None  # the server's own BOS keeps the entries aligned


def _covers(fake, pinned, where="reply"):
    """Every key of the pinned reply that franq reads is in the fake's reply, with the same kind of value."""
    if isinstance(pinned, dict):
        assert isinstance(fake, dict), where
        if pinned and all(k.isdigit() for k in pinned):  # keyed by token id: data, not names
            assert fake and all(k.isdigit() for k in fake), where
            return _covers(next(iter(fake.values())), next(iter(pinned.values())), f"{where}[id]")
        for k, v in pinned.items():
            if k in ("top_logprobs", "usage", "created", "stop_reason", "id", "permissions"):
                continue
            assert k in fake, f"{where}.{k}"
            _covers(fake[k], v, f"{where}.{k}")
    elif isinstance(pinned, list) and pinned and fake:
        _covers(fake[-1], pinned[-1], f"{where}[-1]")


@pytest.mark.parametrize("kind", KINDS)
def test_fake_server_answers_in_the_pinned_shapes(kind, bos_lm, bos_lm_path):
    server = FakeServer(kind, bos_lm)
    lm = served_lm(bos_lm_path, server, kind)
    item_ids = bos_lm.encode("Paris is"), bos_lm.encode(" the capital")
    req = lm.engine.score_request(lm._item(*item_ids))
    got = ServerClient("http://x", transport=server.transport).post(req)
    _covers(got, fixture(kind)["score"]["response"])
    if kind == "llama-cpp-python":  # franq reads its usage too
        assert set(got["usage"]) >= {"prompt_tokens", "completion_tokens"}
    reqs = lm.engine.sample_requests(item_ids[0], bos_lm.tokenizer.decode(item_ids[0]), SampleParams(2, 1.0, max_tokens=3))
    got = ServerClient("http://x", transport=server.transport).post_all(reqs)
    _covers(got, fixture(kind)["sample"]["responses"])


# ---------------------------------------------------------------------------- the pipeline
@pytest.mark.parametrize("kind", KINDS)
def test_served_passes_equal_the_local_ones(kind, bos_lm, bos_lm_path):
    server = FakeServer(kind, bos_lm)
    lm = served_lm(bos_lm_path, server, "auto")  # the engine is detected
    assert lm.engine.name == kind and lm.capabilities.prompt_logprobs is None
    server.posts = 0
    local = make_franq(bos_lm).score(QUESTION, PASSAGES, ANSWER)
    served = make_franq(lm).score(QUESTION, PASSAGES, ANSWER)
    assert server.posts == 2  # one request per condition per answer, all claims together
    assert [c.claim.text for c in served.claims] == [c.claim.text for c in local.claims]
    assert [c.claim.char_spans for c in served.claims] == [c.claim.char_spans for c in local.claims]
    for a, b in zip(served.claims, local.claims):
        assert a.status == b.status
        if a.status == "scored":
            assert a.signals == pytest.approx(b.signals, abs=1e-9)
            assert (a.uq_faith, a.uq_unfaith) == pytest.approx((b.uq_faith, b.uq_unfaith), abs=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_short_form_samples_in_one_request_where_the_engine_takes_n(kind, bos_lm, bos_lm_path):
    server = FakeServer(kind, bos_lm)
    fr = make_franq(served_lm(bos_lm_path, server, kind), {"mode": "short", "uq": {"n_samples": 4,
                                                                                     "short_scoring": "in_policy"}})
    server.posts, server.seen = 0, []
    res = fr.score(QUESTION, PASSAGES, "Paris")
    assert res.mode == "short" and res.claims[0].status == "scored"
    assert np.isfinite(res.claims[0].uq_faith) and np.isfinite(res.claims[0].uq_unfaith)
    assert server.posts == (1 if engines()[kind].n_per_request else 4)


@pytest.mark.parametrize("kind", KINDS)
def test_answer_generates_on_the_server_and_scores_it(kind, bos_lm, bos_lm_path):
    server = FakeServer(kind, bos_lm)
    lm = served_lm(bos_lm_path, server, kind)
    prompt = bos_lm.rag_prompt(QUESTION, [], reserve=8)
    want = bos_lm.generate(prompt.ids, max_new_tokens=8)
    if kind == "llama-cpp-python":  # text out, no ids: the random byte-level model's text does not re-encode
        s = lm.sample(prompt.ids, 1, temperature=0.0, max_new_tokens=8, stop_at_newline=False, greedy_first=True)
        assert s.samples[0].text == want.text.strip()
        return
    got = lm.generate(prompt.ids, max_new_tokens=8)
    assert got.text == want.text
    assert np.allclose(got.token_logprobs, bos_lm.continuation_logprobs([(prompt.ids, got.token_ids)])[0])
    if lm.engine.name in ("tgi", "llama-cpp-python"):
        return  # text in: the random byte-level model's answer (broken UTF-8) cannot round-trip through text
    res, local = (make_franq(x).answer(QUESTION, PASSAGES, max_new_tokens=8) for x in (lm, bos_lm))
    assert res.answer == local.answer  # the engine's token ids are the answer's: the same numbers
    assert [c.uq_faith for c in res.claims] == pytest.approx([c.uq_faith for c in local.claims], abs=1e-9)


# ---------------------------------------------------------------------------- probe and refusals
def test_server_without_prompt_logprobs_is_refused_for_passes_only(bos_lm, bos_lm_path):
    server = FakeServer("vllm", bos_lm, no_prompt_logprobs=True)
    with pytest.raises(InputError, match=r"vllm server .* lacks prompt_logprobs"):
        served_lm(bos_lm_path, server, "vllm")
    lm = served_lm(bos_lm_path, server, "vllm", needs_passes=False)
    assert "prompt log-probabilities no" in lm.capabilities.describe()
    fr = make_franq(lm, {"mode": "short", "uq": {"short_scoring": "in_policy", "n_samples": 3}})
    assert fr.score(QUESTION, PASSAGES, "Paris").claims[0].status == "scored"
    with pytest.raises(Exception, match="lacks prompt_logprobs"):
        lm.continuation_logprobs([([1, 2], [3])])


def test_config_refuses_white_box_components_and_a_missing_tokenizer(bos_lm_path):
    with pytest.raises(InputError, match="faithfulness.name.*lookback.*internals"):
        check_config(served_config(bos_lm_path, "vllm", faithfulness={"name": "lookback"}))
    with pytest.raises(InputError, match="uq.long.extra.*rauq.*internals"):
        check_config(served_config(bos_lm_path, "vllm", uq={"long": {"extra": ["rauq"]}}))
    with pytest.raises(InputError, match="model.tokenizer"):
        franq_config({"model": {"server": "http://127.0.0.1:8000"}})
    with pytest.raises(InputError, match="model.engine"):
        served_config(bos_lm_path, "ollama")
    with pytest.raises(InputError, match="model.server"):
        franq_config({"model": {"server": "127.0.0.1:8000", "tokenizer": "embedded"}})
    with pytest.raises(InputError, match="in_flight"):
        served_config(bos_lm_path, "vllm", model={"in_flight": 10_000})


def test_white_box_calls_say_why(bos_lm, bos_lm_path):
    lm = served_lm(bos_lm_path, FakeServer("sglang", bos_lm), "sglang")
    with pytest.raises(WhiteBoxError, match="internals"):
        lm.answer_pass([1], [2])


def test_auto_detect_names_the_engines_when_it_cannot_tell(bos_lm, bos_lm_path):
    server = FakeServer("vllm", bos_lm)
    server.info = {"/v1/models": {"object": "list", "data": [{"id": "m", "owned_by": "ollama"}]}}
    with pytest.raises(InputError, match="set \\[model\\] engine"):
        served_lm(bos_lm_path, server, "auto")


# ---------------------------------------------------------------------------- throughput and failure
def test_requests_in_flight_are_bounded(bos_lm, bos_lm_path):
    server = FakeServer("vllm", bos_lm)
    lm = served_lm(bos_lm_path, server, "vllm", in_flight=3)
    server.max_open = 0
    items = [(bos_lm.encode(f"Question {i}"), bos_lm.encode(" answer")) for i in range(12)]
    lps = lm.continuation_logprobs(items)
    assert server.max_open == 3
    want = bos_lm.continuation_logprobs(items)
    assert all(np.allclose(a, b) for a, b in zip(lps, want))


def test_retries_on_503_and_429_then_a_clear_error(bos_lm, bos_lm_path):
    server = FakeServer("tgi", bos_lm)
    lm = served_lm(bos_lm_path, server, "tgi", max_retries=2)
    server.posts, server.fail_first, server.fail_status = 0, 2, 429
    item = (bos_lm.encode("Q"), bos_lm.encode(" a b"))
    assert np.allclose(lm.continuation_logprobs([item])[0], bos_lm.continuation_logprobs([item])[0])
    assert server.posts == 3
    server.posts, server.fail_first, server.fail_status = 0, 99, 503
    with pytest.raises(ServerUnavailable, match=r"/generate: no answer after 3 tries \(HTTP 503"):
        lm.continuation_logprobs([item])
    client = ServerClient("http://127.0.0.1:9", max_retries=0, transport=FakeServer("tgi", bos_lm, die_after=0).transport)
    with pytest.raises(ServerUnavailable, match="ConnectError"):
        client.post(Request("POST", "/generate", {}))


def test_batch_run_stops_when_the_server_goes_away_and_the_rerun_resumes(bos_lm, bos_lm_path, tmp_path):
    from franq.runners.local import LocalRunner, run_jsonl

    records = [{"id": f"r{i}", "question": f"{QUESTION} ({i})", "passages": PASSAGES,
                "answer": f"Paris is the capital. It has {i} towers."} for i in range(6)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    server = FakeServer("llama-cpp-python", bos_lm)
    fr = make_franq(served_lm(bos_lm_path, server, "llama-cpp-python", max_retries=1))
    server.posts, server.die_after = 0, 5  # two answers per batch, two requests per answer: dies in batch 2

    def factory():
        return LocalRunner(fr, batch_tokens=1, max_answers=2)

    out = tmp_path / "out.jsonl"
    with pytest.raises(ServerUnavailable, match="rerun"):
        run_jsonl(factory, str(src), str(out), progress=False)
    first = [json.loads(x)["id"] for x in out.read_text().splitlines()]
    assert first == ["r0", "r1"]
    server.die_after = None  # the server is back
    summary = run_jsonl(factory, str(src), str(out), progress=False)
    assert summary.skipped == 2 and summary.bad == 0 and summary.scored == 4
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted(x["id"] for x in lines) == [r["id"] for r in records]  # nothing lost, nothing twice
    clean = tmp_path / "clean.jsonl"
    run_jsonl(lambda: LocalRunner(make_franq(bos_lm), batch_tokens=1, max_answers=2), str(src), str(clean),
              progress=False)
    want = {json.loads(x)["id"]: json.loads(x) for x in clean.read_text().splitlines()}
    for x in lines:
        got = [c.get("p_true") for c in x["claims"]]
        assert got == pytest.approx([c.get("p_true") for c in want[x["id"]]["claims"]], abs=1e-9)
