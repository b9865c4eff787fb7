"""Build the decomposer a :class:`~franq.config.FranqConfig` names.

``decomposer="sentence"`` (the default, also for ``franq score``): the offline sentence
splitter, deterministic and instant. ``decomposer="llm"``: atomic claims from a chat
model, either in-process (``decomposer_backend="local"``: the scoring model, or the
local model at ``decomposer_model``) or through any OpenAI-compatible server
(``decomposer_backend="openai"``).
"""
from __future__ import annotations

from pathlib import Path

from claims.decompose import Decomposer, SentenceDecomposer
from franq.config import FranqConfig
from franq.lm import CausalLM
from franq.lm.load import franq_home

LOCAL_RESPONSE_PREFIX = '["'
"""Prefill for local models: the reply starts inside a JSON list of strings."""


def build_decomposer(config: FranqConfig, lm: CausalLM | None = None) -> Decomposer:
    if config.decomposer == "sentence":
        return SentenceDecomposer()
    from claims.chat import OpenAIChat
    from claims.llm_decompose import LLMDecomposer
    from franq.lm.chat import LocalChat

    cache_dir = Path(config.decomposer_cache_dir) if config.decomposer_cache_dir else franq_home() / "decompose"
    if config.decomposer_backend == "openai":
        try:
            chat = OpenAIChat(config.decomposer_model, base_url=config.decomposer_base_url,
                              api_key_env=config.decomposer_api_key_env, timeout=config.decomposer_timeout,
                              max_retries=config.decomposer_max_retries)
        except ValueError as exc:
            from franq.errors import InputError

            raise InputError(f"config: {exc}") from None
        concurrency = config.decomposer_concurrency
    else:
        if config.decomposer_model is not None:
            lm = CausalLM.load(config.decomposer_model, device=config.device, dtype=config.dtype)
        elif lm is None:
            lm = CausalLM.load(config.model, gguf_file=config.gguf_file, device=config.device, dtype=config.dtype)
        chat = LocalChat(lm, response_prefix=LOCAL_RESPONSE_PREFIX)
        concurrency = 1
    aligner = None
    if config.decomposer_align == "llm":
        from claims.llm_align import LLMWordAligner

        aligner = LLMWordAligner(chat)
    return LLMDecomposer(chat, cache_dir=cache_dir, max_tokens=config.decomposer_max_tokens,
                         concurrency=concurrency, aligner=aligner)
