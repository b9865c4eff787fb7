"""Scoring with a model someone serves (vLLM, SGLang, TGI, llama-cpp-python's server).

    client.py    ServerClient: async requests, at most ``in_flight`` open, retries with backoff
    base.py      the engine adapter contract (ScoreItem, SampleParams, Draw, Engine)
    vllm.py / sglang.py / tgi.py / llama_cpp.py   one adapter per protocol
    probe.py     the capability probe at start-up (and ``engine = "auto"``)
    model.py     ServedLM: the CausalLM interface, inference on the server
    checks.py    config-time checks of the [model] keys and refusals of white-box components
    launch.py    LlamaServer (llama-cpp-python's server on a GGUF, a free port) and f32_gguf

Connect with :func:`connect` (``Franq.from_config`` does, when ``[model] server`` is set).
"""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def engines() -> dict:
    from franq.lm.served.llama_cpp import LlamaCpp
    from franq.lm.served.sglang import SGLang
    from franq.lm.served.tgi import TGI
    from franq.lm.served.vllm import VLLM

    return {e.name: e for e in (VLLM, SGLang, TGI, LlamaCpp)}


def connect(m, *, transport=None, backoff: float = 0.5, needs_passes: bool = True, limits=None):
    """A :class:`~franq.lm.served.model.ServedLM` for the ``[model]`` section ``m``: the
    tokenizer loaded, the engine detected (``auto``) and probed. A server without prompt
    log-probabilities is refused when ``needs_passes``. ``limits``: the config's (reply size,
    retries, JSON depth)."""
    from franq.errors import InputError
    from franq.lm.served.client import ServerClient
    from franq.lm.served.model import ServedLM, load_tokenizer
    from franq.lm.served.probe import detect_engine, probe

    tokenizer, context = load_tokenizer(m.tokenizer or m.path)
    client = ServerClient(m.server, api_key_env=m.api_key_env, in_flight=m.in_flight, timeout=m.timeout,
                          max_retries=m.max_retries, backoff=backoff, transport=transport,
                          limits=limits)
    name = detect_engine(client) if m.engine == "auto" else m.engine
    engine = engines()[name](m.served_model)
    caps = probe(client, engine, tokenizer)
    log.info("served model: %s", caps.describe())
    if needs_passes and caps.prompt_logprobs is not None:
        raise InputError(caps.refusal())
    label = f"served:{name}:{m.served_model or m.tokenizer or m.path}"
    return ServedLM(client, engine, tokenizer, name=label, max_context=int(context or 4096), capabilities=caps)
