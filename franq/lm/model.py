"""CausalLM: a loaded causal language model and its tokenizer, shared by every stage.

The class holds what needs the tokenizer and the context size (text <-> token ids,
character offsets, prompts fitted into the context) and binds the inference functions of
:mod:`franq.lm.teacher_forcing` (teacher forcing, next-token log-probabilities) and
:mod:`franq.lm.sampling` (greedy generation, shared-prefill sampling) as its methods.
Loading is :mod:`franq.lm.load`; the prompt texts are :mod:`franq.lm.prompts`.
"""
from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from franq.errors import ContextOverflowError
from franq.lm import sampling, teacher_forcing
from franq.lm.load import load_pretrained
from franq.lm.prompts import answer_prompt_text
from franq.types import Passage


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt, its token ids, and what was done to fit it into the context."""

    text: str
    ids: tuple[int, ...]
    warnings: tuple[str, ...] = ()


class CausalLM:
    """A loaded causal LM and its tokenizer. Load with :meth:`load`; share one instance."""

    prompt_style = "franq"
    """The answer prompt's wording, ``franq`` or ``paper`` (``[prompts] answer``; set by the pipeline)."""

    def __init__(self, model, tokenizer, *, name: str):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name
        self.device = next(model.parameters()).device
        self.max_context = int(getattr(model.config, "max_position_embeddings", 0) or 2048)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        if self.pad_id is None:
            self.pad_id = 0
        self.supports_logits_to_keep = "logits_to_keep" in inspect.signature(model.forward).parameters
        self._sampler: sampling.Sampler | None = None  # built on first sample()
        """The answer prompt's wording: ``franq`` or ``paper`` (FRANQ fig. 3 / 4); the
        pipeline sets it from ``[prompts] answer``."""

    @classmethod
    def load(cls, name_or_path: str | None = None, *, gguf_file: str | None = None,
             device: str | torch.device | None = None, dtype: str | torch.dtype | None = None) -> CausalLM:
        """Load a model by local path or name; ``None`` loads the embedded default.

        ``gguf_file`` names a GGUF file inside ``name_or_path`` (or is a path to one).
        Names resolve in the local Hugging Face cache only: franq never downloads.
        ``device`` defaults to CUDA when available (:func:`franq.lm.load.resolve_device`).
        """
        model, tokenizer, name = load_pretrained(name_or_path, gguf_file=gguf_file, device=device, dtype=dtype)
        return cls(model, tokenizer, name=name)

    # ------------------------------------------------------------------ prompts
    def render(self, question: str, passages: Sequence[Passage] | None, *, instruction: str | None = None) -> str:
        """The chat prompt up to the start of the answer. ``passages=None`` gives the
        closed-book prompt: identical, with the passages block removed (paper eq. 3).
        ``instruction`` replaces the default one (short-form mode asks for one line)."""
        return answer_prompt_text(self.tokenizer, question, passages, instruction=instruction, style=self.prompt_style)

    def rag_prompt(self, question: str, passages: Sequence[Passage], *, reserve: int = 0,
                   on_overflow: str = "truncate", instruction: str | None = None) -> Prompt:
        """The prompt with passages, fitted into the context with ``reserve`` tokens left
        for the answer. On overflow, ``"truncate"`` shortens passages from the last one
        backwards and records a warning for each; ``"error"`` raises."""
        passages = list(passages)
        warnings: list[str] = []
        while True:
            text = self.render(question, passages, instruction=instruction)
            ids = self.encode(text)
            excess = len(ids) + reserve - self.max_context
            if excess <= 0:
                return Prompt(text, tuple(ids), tuple(warnings))
            if on_overflow == "error":
                raise ContextOverflowError(
                    f"passages: prompt ({len(ids)} tokens) plus answer ({reserve}) exceeds the "
                    f"model context of {self.max_context} tokens"
                )
            idx = max((i for i, p in enumerate(passages) if p.text), default=None)
            if idx is None:
                closed = len(self.encode(self.render(question, None, instruction=instruction)))
                if closed + reserve <= self.max_context:  # the passages' numbers and titles are what overflows
                    raise ContextOverflowError(
                        f"passages: the headers of the {len(passages)} passages (their numbers and titles) take "
                        f"{len(ids) - closed} tokens even with every passage text cut, which with the question "
                        f"and the answer ({closed} + {reserve} tokens) exceeds the model context of "
                        f"{self.max_context} tokens; give fewer passages")
                raise ContextOverflowError(
                    f"question/answer: {len(ids)} prompt tokens plus {reserve} answer tokens exceed "
                    f"the model context of {self.max_context} tokens even with no passage text"
                )
            p_ids = self.encode(passages[idx].text)
            keep = max(len(p_ids) - excess - 8, 0)
            new_text = self.tokenizer.decode(p_ids[:keep]) if keep else ""
            warnings.append(
                f"passages[{idx}]: truncated from {len(p_ids)} to {keep} tokens to fit the "
                f"model context of {self.max_context} tokens"
            )
            passages[idx] = Passage(new_text, passages[idx].title)

    def closed_book_prompt(self, question: str, *, instruction: str | None = None) -> Prompt:
        text = self.render(question, None, instruction=instruction)
        return Prompt(text, tuple(self.encode(text)))

    # ------------------------------------------------------------------ tokens
    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode_answer(self, answer: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids of an existing answer and each token's character range in it."""
        if getattr(self.tokenizer, "is_fast", False):
            enc = self.tokenizer(answer, add_special_tokens=False, return_offsets_mapping=True)
            return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]
        ids = self.encode(answer)
        return ids, self.decode_offsets(ids, answer)

    def decode_offsets(self, ids: Sequence[int], text: str | None = None) -> list[tuple[int, int]]:
        """Character range of each token in the decoded text, by decoding prefixes.

        Works for any tokenizer; a token that ends inside a multi-byte character is given
        the range of the token that completes it.
        """
        text = self.tokenizer.decode(ids, skip_special_tokens=True) if text is None else text
        bounds = [0]
        for t in range(1, len(ids) + 1):
            prefix = self.tokenizer.decode(ids[:t], skip_special_tokens=True)
            bounds.append(max(_common_prefix(prefix, text), bounds[-1]))
        offsets = [(bounds[t], bounds[t + 1]) for t in range(len(ids))]
        for t in range(len(ids) - 2, -1, -1):  # zero-width byte pieces borrow the next range
            if offsets[t][0] == offsets[t][1]:
                offsets[t] = (offsets[t][0], offsets[t + 1][1])
        return offsets

    # ------------------------------------------------------------------ inference
    generate = sampling.generate
    continuation_logprobs = teacher_forcing.continuation_logprobs
    captured_logprobs = teacher_forcing.captured_logprobs
    next_token_logprobs = teacher_forcing.next_token_logprobs
    answer_pass = teacher_forcing.answer_pass
    next_token_logprobs_after = teacher_forcing.next_token_logprobs_after
    continuation_logprobs_after = teacher_forcing.continuation_logprobs_after

    def sample(self, prompt_ids: Sequence[int], n: int, **options) -> sampling.SampleSet:
        """``n`` sampled answers with one shared prompt prefill; see :meth:`franq.lm.sampling.Sampler.sample`."""
        return self._get_sampler().sample(prompt_ids, n, **options)

    def prefill(self, prompt_ids: Sequence[int]) -> sampling.Prefill:
        """Run a prompt once, for :meth:`sample` ``prefill=`` when the caller also wants the
        prompt's KV cache (copy it first: sampling consumes it)."""
        return self._get_sampler().prefill(prompt_ids)

    def _get_sampler(self) -> sampling.Sampler:
        if self._sampler is None:
            self._sampler = sampling.Sampler(self)
        return self._sampler


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
