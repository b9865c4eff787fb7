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
    def render(self, question: str, passages: Sequence[Passage] | None, *, instruction: str | None = None,
               style: str = "franq") -> str:
        """The chat prompt up to the start of the answer. ``passages=None`` gives the
        closed-book prompt: identical, with the passages block removed (paper eq. 3).
        ``instruction`` replaces the default one (short-form mode asks for one line).
        ``style``: the wording, ``franq`` or ``paper`` (FRANQ fig. 3 / 4; a pipeline passes
        its ``[prompts] answer``)."""
        return answer_prompt_text(self.tokenizer, question, passages, instruction=instruction, style=style)

    def rag_prompt(self, question: str, passages: Sequence[Passage], *, reserve: int = 0,
                   on_overflow: str = "truncate", instruction: str | None = None, style: str = "franq") -> Prompt:
        """The prompt with passages, fitted into the context with ``reserve`` tokens left
        for the answer. On overflow, ``"truncate"`` shortens passages from the last one
        backwards and records a warning for each; ``"error"`` raises.

        The rule: while the prompt is too long, the last passage with text is cut to
        ``len(its tokens) - excess - 8`` tokens (to nothing when that is not positive). The
        fit follows that rule without re-tokenizing the prompt once per passage: each passage
        is tokenized once (one batched call), the number of passages cut whole is chosen from
        those counts and confirmed with a few whole-prompt tokenizations (O(log passages)),
        and a prompt that cannot fit even with every passage text cut fails at once
        (:class:`_Fit`)."""
        return _Fit(self, question, list(passages), reserve, instruction, style).run(on_overflow)

    def closed_book_prompt(self, question: str, *, instruction: str | None = None, style: str = "franq") -> Prompt:
        text = self.render(question, None, instruction=instruction, style=style)
        return Prompt(text, tuple(self.encode(text)))

    # ------------------------------------------------------------------ tokens
    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode_many(self, texts: Sequence[str]) -> list[list[int]]:
        """:meth:`encode` of each text, in one tokenizer call."""
        if not texts:
            return []
        return [list(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]

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


class _Fit:
    """Fitting passages into the context (:meth:`CausalLM.rag_prompt`). State ``k``: the
    passages with the texts of the last ``k`` passages that have text cut to nothing."""

    MARGIN = 8
    """Tokens a truncated passage gives up beyond the excess (re-tokenizing a cut text can differ)."""

    def __init__(self, lm: CausalLM, question: str, passages: list[Passage], reserve: int, instruction: str | None,
                 style: str = "franq"):
        self.lm, self.question, self.passages = lm, question, passages
        self.reserve, self.instruction, self.style = reserve, instruction, style
        self.order = [i for i in reversed(range(len(passages))) if passages[i].text]  # the order they are cut in
        self.states: dict[int, tuple[str, list[int]]] = {}
        self.p_ids: list[list[int]] | None = None

    def prompt(self, passages: Sequence[Passage]) -> tuple[str, list[int]]:
        text = self.lm.render(self.question, passages, instruction=self.instruction, style=self.style)
        return text, self.lm.encode(text)

    def excess(self, ids: Sequence[int]) -> int:
        return len(ids) + self.reserve - self.lm.max_context

    def cut(self, k: int) -> list[Passage]:
        gone = set(self.order[:k])
        return [Passage("", p.title) if i in gone else p for i, p in enumerate(self.passages)]

    def state(self, k: int) -> tuple[str, list[int]]:
        if k not in self.states:
            self.states[k] = self.prompt(self.cut(k))
        return self.states[k]

    def cut_whole(self, k: int) -> bool:
        """Whether the rule cuts passage ``order[k]`` to nothing when it reaches state ``k``."""
        if k >= len(self.order):
            return False
        return self.excess(self.state(k)[1]) >= max(1, len(self.p_ids[self.order[k]]) - self.MARGIN)

    def run(self, on_overflow: str) -> Prompt:
        lm = self.lm
        text, ids = self.states[0] = self.prompt(self.passages)
        if self.excess(ids) <= 0:
            return Prompt(text, tuple(ids))
        if on_overflow == "error":
            raise ContextOverflowError(
                f"passages: prompt ({len(ids)} tokens) plus answer ({self.reserve}) exceeds the "
                f"model context of {lm.max_context} tokens")
        m = len(self.order)
        if self.excess(self.state(m)[1]) > 0:  # not even with every passage text cut: fail now
            self.overflow(self.state(m)[1])
        self.p_ids = [[] for _ in self.passages]
        for i, p_ids in zip(self.order, lm.encode_many([self.passages[i].text for i in self.order])):
            self.p_ids[i] = p_ids
        k = self.search(self.estimate())
        warnings = [f"passages[{i}]: truncated from {len(self.p_ids[i])} to 0 tokens to fit the model context "
                    f"of {lm.max_context} tokens" for i in self.order[:k]]
        return self.finish(self.cut(k), self.state(k), warnings)

    def estimate(self) -> int:
        """The first state whose passage the rule does not cut whole, from the passages'
        own token counts (each passage's share of the prompt: its tokens plus the average
        difference, so that states 0 and ``m`` are exact)."""
        m = len(self.order)
        shares = [len(self.p_ids[i]) for i in self.order]
        spread = (len(self.states[0][1]) - len(self.states[m][1]) - sum(shares)) / m
        excess = float(self.excess(self.states[0][1]))
        for k, share in enumerate(shares):
            if excess < max(1, share - self.MARGIN):
                return k
            excess -= share + spread
        return m

    def search(self, k: int) -> int:
        """The first state ``k`` with ``cut_whole(k)`` false, found from the estimate by
        galloping and bisection over exact whole-prompt token counts: ``cut_whole(k - 1)``
        holds and ``cut_whole(k)`` does not."""
        m = len(self.order)
        if self.cut_whole(k):  # the estimate stopped short: move forward
            lo, step = k, 1
            hi = min(k + step, m)
            while self.cut_whole(hi):
                lo, step = hi, step * 2
                hi = min(k + step, m)
        elif k > 0 and not self.cut_whole(k - 1):  # it went too far: move back
            hi, step = k - 1, 2
            lo = max(k - step, 0)
            while not self.cut_whole(lo):
                if lo == 0:
                    return 0
                hi, step = lo, step * 2
                lo = max(k - step, 0)
        else:
            return k
        while hi - lo > 1:  # cut_whole(lo) holds, cut_whole(hi) does not
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.cut_whole(mid) else (lo, mid)
        return hi

    def finish(self, passages: list[Passage], state: tuple[str, list[int]], warnings: list[str]) -> Prompt:
        """The rule, step by step, from ``state`` (usually one truncation, then it fits)."""
        lm = self.lm
        text, ids = state
        while True:
            excess = self.excess(ids)
            if excess <= 0:
                return Prompt(text, tuple(ids), tuple(warnings))
            idx = max((i for i, p in enumerate(passages) if p.text), default=None)
            if idx is None:
                self.overflow(ids)
            p_ids = self.p_ids[idx] if passages[idx] is self.passages[idx] else lm.encode(passages[idx].text)
            keep = max(len(p_ids) - excess - self.MARGIN, 0)
            new_text = lm.tokenizer.decode(p_ids[:keep]) if keep else ""
            warnings.append(f"passages[{idx}]: truncated from {len(p_ids)} to {keep} tokens to fit the "
                            f"model context of {lm.max_context} tokens")
            passages[idx] = Passage(new_text, passages[idx].title)
            text, ids = self.prompt(passages)

    def overflow(self, ids: Sequence[int]):
        """The error when even the prompt with every passage text cut (``ids``) does not fit."""
        lm, n, reserve = self.lm, len(self.passages), self.reserve
        closed = len(lm.encode(lm.render(self.question, None, instruction=self.instruction, style=self.style)))
        if closed + reserve <= lm.max_context:  # the passages' numbers and titles are what overflows
            raise ContextOverflowError(
                f"passages: the headers of the {n} passages (their numbers and titles) take "
                f"{len(ids) - closed} tokens even with every passage text cut, which with the question "
                f"and the answer ({closed} + {reserve} tokens) exceeds the model context of "
                f"{lm.max_context} tokens; give fewer passages")
        raise ContextOverflowError(
            f"question/answer: {len(ids)} prompt tokens plus {reserve} answer tokens exceed "
            f"the model context of {lm.max_context} tokens even with no passage text")


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
