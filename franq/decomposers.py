"""``decomposer.name = "llm"``: atomic claims from a chat model (registered in
:mod:`franq.registry`; ``sentence``, the offline splitter, needs no factory).

The chat model runs in-process (``decomposer.backend = "local"``: the scoring model, or
the local model at ``decomposer.model``) or behind any OpenAI-compatible server
(``decomposer.backend = "openai"``).
"""
from __future__ import annotations

from pathlib import Path

from claims.decompose import Decomposer
from franq.errors import InputError

LOCAL_RESPONSE_PREFIX = '["'
"""Prefill for local models: the reply starts inside a JSON list of strings."""


def llm_decomposer(config, lm) -> Decomposer:
    from claims.chat import OpenAIChat
    from claims.llm_decompose import LLMDecomposer
    from franq.lm import CausalLM
    from franq.lm.chat import LocalChat
    from franq.lm.load import franq_home

    d = config.decomposer
    cache_dir = Path(d.cache_dir) if d.cache_dir else franq_home() / "decompose"
    if d.backend == "openai":
        try:
            chat = OpenAIChat(d.model, base_url=d.base_url, api_key_env=d.api_key_env, timeout=d.timeout,
                              max_retries=d.max_retries)
        except ValueError as exc:
            raise InputError(f"config [decomposer]: {exc}") from None
        concurrency = d.concurrency
    else:
        if d.model is not None:
            lm = CausalLM.load(d.model, device=config.model.device, dtype=config.model.dtype)
        chat = LocalChat(lm, response_prefix=LOCAL_RESPONSE_PREFIX)
        concurrency = 1
    aligner = None
    if d.align == "llm":
        from claims.llm_align import LLMWordAligner

        aligner = LLMWordAligner(chat, prompt=config.prompts.of("align"))
    return LLMDecomposer(chat, cache_dir=cache_dir, max_tokens=d.max_tokens, concurrency=concurrency,
                         aligner=aligner, prompt=config.prompts.of("decompose"))
