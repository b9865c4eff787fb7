"""Decoding answers: greedy generation (:func:`generate`) and shared-prefill sampling
(:class:`Sampler`), N answers to one prompt for the price of one prefill.

``model.generate(num_return_sequences=N)`` copies the prompt N times and prefills every
copy. :class:`Sampler` runs the prompt once, repeats its KV cache to N rows, draws the N
first tokens from the one set of prompt logits, and then decodes the N sequences in
parallel, dropping each row from the batch as soon as it stops. Cost: one prefill plus
about N decodes per step of the longest answer.

Each sampled token is drawn from the temperature / top-k / top-p filtered distribution,
but the recorded log-probability is that of the raw model (temperature 1, no filtering),
so ``Sample.logprob`` is the model's likelihood of the answer, the quantity semantic
entropy sums over a class (Kuhn et al. 2023), and it equals teacher forcing of the same
tokens (:func:`franq.lm.teacher_forcing.continuation_logprobs`).

Stop conditions: an end-of-sequence token (not part of the answer), or, when
``stop_at_newline`` (short-form answers), the first token that contains a newline after
some non-whitespace text: that token is kept in ``token_ids`` (it is the "end of answer"
event whose probability belongs to the sequence) and the text is cut at the newline.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from franq.lm.teacher_forcing import entropies, keep_logits, returned_cache, with_cache

if TYPE_CHECKING:
    from franq.lm.model import CausalLM


@dataclass(frozen=True)
class Generation:
    """A greedy answer: its text, token ids, each token's log-probability under the
    prompt it was generated from, and each token's character range in ``text``."""

    text: str
    token_ids: tuple[int, ...]
    token_logprobs: tuple[float, ...]
    offsets: tuple[tuple[int, int], ...]


@torch.inference_mode()
def generate(lm: CausalLM, prompt_ids: Sequence[int], *, max_new_tokens: int = 256) -> Generation:
    """Greedy decoding; the returned log-probabilities are from the raw logits, so they
    equal teacher-forced log-probabilities of the same tokens under the same prompt."""
    from transformers import GenerationConfig

    input_ids = torch.tensor([list(prompt_ids)], device=lm.device)
    eos = lm.tokenizer.eos_token_id
    # every generation setting in the one config: transformers deprecates passing a
    # generation_config together with generation keyword arguments (and warns each call)
    config = GenerationConfig(max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=eos,
                              pad_token_id=lm.pad_id, output_logits=True, return_dict_in_generate=True)
    out = lm.model.generate(input_ids, attention_mask=torch.ones_like(input_ids), generation_config=config)
    new = out.sequences[0, input_ids.shape[1]:].tolist()
    logits = torch.stack(out.logits, dim=1)[0].float()
    lp = torch.log_softmax(logits, dim=-1).gather(1, torch.tensor(new, device=logits.device)[:, None])[:, 0]
    n = len(new)
    special = set(lm.tokenizer.all_special_ids)
    while n and new[n - 1] in special:  # drop end-of-turn / EOS
        n -= 1
    ids = new[:n]
    text = lm.tokenizer.decode(ids, skip_special_tokens=True)
    return Generation(text, tuple(ids), tuple(lp[:n].tolist()), tuple(lm.decode_offsets(ids, text)))


@dataclass(frozen=True)
class Sample:
    """One sampled answer. ``logprob`` is the sum of ``token_logprobs``; ``token_entropies``
    are the entropies (nats) of the raw model distributions the tokens were drawn from."""

    text: str
    token_ids: tuple[int, ...]
    token_logprobs: tuple[float, ...]
    logprob: float
    stop: str  # "eos", "newline" or "length"
    token_entropies: tuple[float, ...] = ()
    n_tokens: int | None = None
    """The number of tokens when ``token_ids`` are not kept (a cached sample); else ``len(token_ids)``."""


@dataclass
class Prefill:
    """A prompt run once: its KV cache (one row) and the logits for the first answer token.
    :meth:`Sampler.sample` consumes the cache; copy it first to reuse it."""

    cache: object
    logits: torch.Tensor
    length: int


@dataclass(frozen=True)
class SampleSet:
    """N answers sampled from one prompt."""

    samples: tuple[Sample, ...]
    prompt_tokens: int

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(s.text for s in self.samples)

    @property
    def logprobs(self) -> np.ndarray:
        return np.array([s.logprob for s in self.samples], dtype=np.float64)

    @property
    def lengths(self) -> np.ndarray:
        """Each sample's number of tokens (0 where the tokens are not recorded)."""
        return np.array([len(s.token_ids) if s.n_tokens is None else s.n_tokens for s in self.samples],
                        dtype=np.int64)


class Sampler:
    """Samples answers from a :class:`~franq.lm.model.CausalLM` with a shared prompt prefill.

    Holds per-vocabulary tables (which tokens hold a newline, which hold text) built once.
    Get one from :meth:`~franq.lm.model.CausalLM.sample`, which keeps it with the model.
    """

    def __init__(self, lm: CausalLM):
        self.lm = lm
        vocab = len(lm.tokenizer)
        size = max(vocab, int(lm.model.get_output_embeddings().weight.shape[0]))
        pieces = lm.tokenizer.batch_decode([[i] for i in range(vocab)], skip_special_tokens=False)
        has_nl = np.zeros(size, dtype=bool)
        text_before_nl = np.zeros(size, dtype=bool)
        has_text = np.zeros(size, dtype=bool)
        for i, piece in enumerate(pieces):
            has_text[i] = bool(piece.strip())
            if "\n" in piece:
                has_nl[i] = True
                text_before_nl[i] = bool(piece.split("\n", 1)[0].strip())
        stop = {lm.tokenizer.eos_token_id}
        gen_eos = getattr(getattr(lm.model, "generation_config", None), "eos_token_id", None)
        stop.update(gen_eos if isinstance(gen_eos, (list, tuple)) else [gen_eos])
        stop.discard(None)
        is_eos = np.zeros(size, dtype=bool)
        is_eos[sorted(stop)] = True
        special = set(lm.tokenizer.all_special_ids)
        has_text[[i for i in special if i < size]] = False
        dev = lm.device
        self._has_nl = torch.from_numpy(has_nl).to(dev)
        self._text_before_nl = torch.from_numpy(text_before_nl).to(dev)
        self._has_text = torch.from_numpy(has_text).to(dev)
        self._is_eos = torch.from_numpy(is_eos).to(dev)
        self._special = special

    @torch.inference_mode()
    def prefill(self, prompt_ids: Sequence[int]) -> Prefill:
        """Run the prompt once (for :meth:`sample` ``prefill=``, when the caller also
        wants the prompt's cache for something else)."""
        if not prompt_ids:
            raise ValueError("prompt_ids: the prompt is empty")
        lm = self.lm
        ids = torch.tensor([list(prompt_ids)], device=lm.device)
        out = lm.model(input_ids=ids, use_cache=True, **keep_logits(lm, 1))
        return Prefill(returned_cache(out), out.logits[:, -1].float(), ids.shape[1])

    @torch.inference_mode()
    def sample(self, prompt_ids: Sequence[int], n: int, *, temperature: float = 1.0, top_p: float = 1.0,
               top_k: int = 0, max_new_tokens: int = 32, stop_at_newline: bool = True,
               seed: int | None = 0, greedy_first: bool = False, prefill: Prefill | None = None) -> SampleSet:
        """Draw ``n`` answers to ``prompt_ids``. ``temperature=0`` is greedy decoding;
        ``top_k=0`` and ``top_p=1`` disable those filters. The same seed gives the same
        samples on the same device. ``greedy_first`` makes row 0 the greedy answer, so an
        answer and its samples share one prefill. ``prefill`` (from :meth:`prefill` of the
        same prompt) skips the prompt pass; its cache is consumed."""
        _check(n, temperature, top_p, top_k, max_new_tokens)
        if not prompt_ids:
            raise ValueError("prompt_ids: the prompt is empty")
        lm = self.lm
        gen = torch.Generator(device=lm.device)
        gen.manual_seed(int(seed) if seed is not None else int(torch.seed()))
        if prefill is None:
            prefill = self.prefill(prompt_ids)
        elif prefill.length != len(prompt_ids):
            raise ValueError(f"prefill: it holds {prefill.length} prompt tokens, the prompt has {len(prompt_ids)}")
        cache = prefill.cache
        cache.batch_repeat_interleave(n)
        logits = prefill.logits.expand(n, -1)
        length = prefill.length
        alive = torch.arange(n, device=lm.device)  # original row of each batch row
        started = torch.zeros(n, dtype=torch.bool, device=lm.device)
        tokens: list[list[int]] = [[] for _ in range(n)]
        lps: list[list[float]] = [[] for _ in range(n)]
        ents: list[list[float]] = [[] for _ in range(n)]
        stops = ["length"] * n
        for step in range(max_new_tokens):
            logp = torch.log_softmax(logits, dim=-1)
            nxt = _draw(logits, temperature, top_k, top_p, gen)
            if greedy_first and int(alive[0]) == 0:
                nxt[0] = logits[0].argmax()
            picked = logp.gather(1, nxt[:, None])[:, 0]
            entropy = entropies(logp)
            eos = self._is_eos[nxt]
            nl = torch.zeros_like(eos)
            if stop_at_newline:
                nl = self._has_nl[nxt] & (started[alive] | self._text_before_nl[nxt])
                started[alive] |= self._has_text[nxt]
            for row, tok, lp, h, e, s in zip(alive.tolist(), nxt.tolist(), picked.tolist(), entropy.tolist(),
                                             eos.tolist(), nl.tolist()):
                if e:
                    stops[row] = "eos"
                    continue
                tokens[row].append(tok)
                lps[row].append(lp)
                ents[row].append(h)
                if s:
                    stops[row] = "newline"
            keep = ~(eos | nl)
            if not bool(keep.any()) or step == max_new_tokens - 1:
                break
            if not bool(keep.all()):
                idx = keep.nonzero()[:, 0]
                cache.batch_select_indices(idx)
                alive, nxt = alive[idx], nxt[idx]
            length += 1
            pos = torch.full((len(alive), 1), length - 1, device=lm.device)
            out = lm.model(input_ids=nxt[:, None], **with_cache(lm, cache), use_cache=True, position_ids=pos,
                           attention_mask=torch.ones((len(alive), length), dtype=torch.long, device=lm.device))
            cache = returned_cache(out)
            logits = out.logits[:, -1].float()
        samples = []
        for row in range(n):
            samples.append(Sample(self._text(tokens[row], stops[row]), tuple(tokens[row]), tuple(lps[row]),
                                  float(np.sum(lps[row], dtype=np.float64)), stops[row], tuple(ents[row])))
        return SampleSet(tuple(samples), len(prompt_ids))

    def _text(self, token_ids: list[int], stop: str) -> str:
        text = self.lm.tokenizer.decode(token_ids, skip_special_tokens=True)
        if stop == "newline":
            head = text.lstrip()
            text = head.split("\n", 1)[0]
        return text.strip()


def _draw(logits: torch.Tensor, temperature: float, top_k: int, top_p: float,
          gen: torch.Generator) -> torch.Tensor:
    """One token per row from the filtered, tempered distribution (greedy at temperature 0)."""
    if temperature == 0:
        return logits.argmax(dim=-1)
    scores = logits / temperature
    if top_k and top_k < scores.shape[-1]:
        kth = torch.topk(scores, top_k, dim=-1).values[:, -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if top_p < 1.0:
        sorted_scores, order = torch.sort(scores, descending=True, dim=-1)
        probs = torch.softmax(sorted_scores, dim=-1)
        drop = probs.cumsum(dim=-1) - probs >= top_p  # keep the smallest set reaching top_p
        sorted_scores = sorted_scores.masked_fill(drop, float("-inf"))
        scores = torch.full_like(scores, float("-inf")).scatter(1, order, sorted_scores)
    probs = torch.softmax(scores, dim=-1)
    return torch.multinomial(probs, 1, generator=gen)[:, 0]


def _check(n, temperature, top_p, top_k, max_new_tokens) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n: expected a positive integer, got {n!r}")
    if not temperature >= 0:
        raise ValueError(f"temperature: expected a number >= 0, got {temperature!r}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p: expected a number in (0, 1], got {top_p!r}")
    if not isinstance(top_k, int) or top_k < 0:
        raise ValueError(f"top_k: expected an integer >= 0 (0 = off), got {top_k!r}")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens: expected a positive integer, got {max_new_tokens!r}")
