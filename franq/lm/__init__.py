"""The causal language model, split by job:

    load.py      the device (resolve_device), the dtype, loading and the GGUF cache
    model.py     CausalLM: a loaded model + tokenizer; text <-> tokens; prompts fitted to the context
    teacher_forcing.py  teacher-forced log-probs, next-token log-probs, the answer pass and its follow-ups
    sampling.py  greedy generation and shared-prefill sampling
    prompts.py   every prompt franq sends, with its version; how passages are formatted
    labels.py    P(first word) between two answer words from next-token log-probs
    chat.py      LocalChat: claims' ChatModel on a CausalLM
    openai_client.py  the one OpenAI-compatible client factory (claims.openai_client, re-exported)
    served/      ServedLM: the same interface with inference on a vLLM / SGLang / TGI / llama-cpp-python server

The names below load on first use (torch with them), so the torch-free modules
(prompts, labels) import fast.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from franq.lm.model import CausalLM, Prompt
    from franq.lm.teacher_forcing import AnswerPass
    from franq.lm.sampling import Generation

__all__ = ["AnswerPass", "CausalLM", "Generation", "Prompt"]
_HOMES = {"AnswerPass": "teacher_forcing", "CausalLM": "model", "Generation": "sampling", "Prompt": "model"}


def load_lm(config, *, teacher_forces: bool = True):
    """The scoring model of a :class:`~franq.config.FranqConfig`: a served one when
    ``[model] server`` is set (connected and probed; refused when it lacks prompt
    log-probabilities and ``teacher_forces``: a preset the pipeline runs teacher-forces
    the answer), else loaded in-process."""
    m = config.model
    if m.server is None:
        from franq.lm.model import CausalLM
        return CausalLM.load(m.path, gguf_file=m.gguf_file, device=m.device, dtype=m.dtype)
    from franq.lm.served import connect
    return connect(m, needs_passes=teacher_forces, limits=config.limits)


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(f"franq.lm.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'franq.lm' has no attribute {name!r}")
