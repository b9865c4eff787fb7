"""Forward passes that score given tokens: exact teacher-forced log-probabilities.

FRANQ needs two passes over the *same* answer tokens (paper eq. 1 and 3): one with the
retrieved passages in the prompt, one with them removed. :func:`continuation_logprobs`
scores token ids under any number of prompts in length-sorted, left-padded batches;
:func:`next_token_logprobs` reads the next-token distribution after each prompt;
:func:`answer_pass` keeps the KV cache of prompt + answer so that follow-up questions
about the answer (:func:`next_token_logprobs_after`, P(True)) cost only their own tokens.

Each function takes the :class:`~franq.lm.model.CausalLM` as its first argument and is
bound as a method of it (``lm.continuation_logprobs(items)``).
"""
from __future__ import annotations

import contextlib
import copy
import functools
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from franq.errors import ContextOverflowError
from franq.lm import capture
from franq.lm.capture import CaptureSpec, TokenInternals

if TYPE_CHECKING:
    from franq.lm.model import CausalLM

LSE_CHUNK = 64
"""Answer positions per float32 log-sum-exp in teacher forcing: the logits can be 100s of MB."""


@dataclass
class AnswerPass:
    """One teacher-forced pass over prompt + answer that keeps its KV cache, so follow-up
    questions about the answer (P(True)) cost only their own tokens."""

    cache: object
    length: int
    token_logprobs: np.ndarray
    token_entropies: np.ndarray


def entropies(logp: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of each distribution in the last dimension of log-probabilities
    ``logp``; zero-probability entries count 0."""
    return -(logp.exp() * logp).nan_to_num().sum(-1)


def keep_logits(lm: CausalLM, n: int) -> dict:
    """The forward keyword that computes logits for the last ``n`` positions only, where
    the model supports it."""
    return {"logits_to_keep": n} if lm.supports_logits_to_keep else {}


def with_cache(lm: CausalLM, cache) -> dict:
    """The forward keyword that passes a KV cache: ``cache`` where the model's forward
    takes it (transformers 5.x, which deprecates ``past_key_values`` with a
    FutureWarning), ``past_key_values`` on older transformers."""
    return {_cache_keyword(type(lm.model)): cache}


@functools.lru_cache(maxsize=None)
def _cache_keyword(model_class: type) -> str:
    return "cache" if "cache" in inspect.signature(model_class.forward).parameters else "past_key_values"


def returned_cache(out):
    """The KV cache a forward returned, read without the deprecated ``past_key_values``
    attribute where the output has ``cache``."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


@torch.inference_mode()
def continuation_logprobs(lm: CausalLM, items: Sequence[tuple[Sequence[int], Sequence[int]]], *,
                          max_batch_tokens: int = 4096) -> list[np.ndarray]:
    """``log p(c_t | prompt, c_<t)`` for each ``(prompt_ids, continuation_ids)`` pair.

    Exact teacher forcing. Sequences are sorted by length and grouped into left-padded
    batches of at most ``max_batch_tokens`` padded tokens (a sequence that alone is
    longer runs by itself); position ids follow the attention mask, so a batched result
    equals the unbatched one. Only the continuation's logits are materialized.
    """
    return _teacher_force(lm, items, max_batch_tokens, None)[0]


@torch.inference_mode()
def captured_logprobs(lm: CausalLM, items: Sequence[tuple[Sequence[int], Sequence[int]]], spec: CaptureSpec, *,
                      max_batch_tokens: int = 4096) -> tuple[list[np.ndarray], list[TokenInternals]]:
    """:func:`continuation_logprobs` (the same log-probabilities, exactly) plus, for each
    item, the internals ``spec`` asks for (:mod:`franq.lm.capture`), reduced per layer as
    the pass runs."""
    return _teacher_force(lm, items, max_batch_tokens, spec)


def _teacher_force(lm, items, max_batch_tokens, spec):
    for k, (p, c) in enumerate(items):
        if not p:
            raise ValueError(f"items[{k}]: prompt is empty")
        if len(p) + len(c) > lm.max_context:
            raise ContextOverflowError(
                f"items[{k}]: {len(p)} prompt + {len(c)} answer tokens exceed the model "
                f"context of {lm.max_context}")
    results: list[np.ndarray | None] = [None] * len(items)
    internals: list[TokenInternals | None] = [None] * len(items)
    order = sorted(range(len(items)), key=lambda i: -(len(items[i][0]) + len(items[i][1])))
    for batch in length_batches(order, [len(p) + len(c) for p, c in items], max_batch_tokens):
        _score_batch(lm, [items[i] for i in batch], batch, results, spec, internals)
    return results, internals


@torch.inference_mode()
def next_token_logprobs(lm: CausalLM, prompts: Sequence[Sequence[int]], candidates: Sequence[int], *,
                        max_batch_tokens: int = 4096) -> np.ndarray:
    """``log p(candidate | prompt)`` for each prompt, shape ``(len(prompts), len(candidates))``,
    in the same length-sorted, left-padded batches as :func:`continuation_logprobs`."""
    out = np.zeros((len(prompts), len(candidates)), dtype=np.float64)
    cand = torch.tensor(list(candidates), device=lm.device)
    order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
    for batch in length_batches(order, [len(p) for p in prompts], max_batch_tokens):
        ids, mask, positions = _left_pad(lm, [prompts[i] for i in batch])
        logits = lm.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                          use_cache=False, **keep_logits(lm, 1)).logits[:, -1].float()
        out[batch] = torch.log_softmax(logits, dim=-1)[:, cand].double().cpu().numpy()
    return out


@torch.inference_mode()
def answer_pass(lm: CausalLM, prompt_ids: Sequence[int], answer_ids: Sequence[int]) -> AnswerPass:
    """Teacher-force ``answer_ids`` after ``prompt_ids`` in one unpadded pass: each answer
    token's log-probability (as :func:`continuation_logprobs`) and the entropy of the
    distribution it was scored under, plus the cache for :func:`next_token_logprobs_after`."""
    if not prompt_ids:
        raise ValueError("prompt_ids: the prompt is empty")
    ids = torch.tensor([list(prompt_ids) + list(answer_ids)], device=lm.device)
    if ids.shape[1] > lm.max_context:
        raise ContextOverflowError(f"{len(prompt_ids)} prompt + {len(answer_ids)} answer tokens exceed "
                                   f"the model context of {lm.max_context}")
    keep = len(answer_ids) + 1
    out = lm.model(input_ids=ids, use_cache=True, **keep_logits(lm, keep))
    logp = torch.log_softmax(out.logits[0, -keep:-1].float(), dim=-1)
    picked = logp.gather(1, ids[0, -len(answer_ids):, None])[:, 0] if answer_ids else logp[:0, 0]
    return AnswerPass(returned_cache(out), ids.shape[1], picked.double().cpu().numpy(),
                      entropies(logp).double().cpu().numpy())


@torch.inference_mode()
def next_token_logprobs_after(lm: CausalLM, cache, length: int, continuations: Sequence[Sequence[int]],
                              candidates: Sequence[int], *, batch_size: int = 8) -> np.ndarray:
    """``log p(candidate | prefix + continuation)`` for each continuation, where ``cache``
    holds the ``length``-token prefix (from :func:`answer_pass` or a sampler prefill; it
    is not modified). Continuations are right-padded in batches of ``batch_size``; the
    prefix is never recomputed."""
    out = np.zeros((len(continuations), len(candidates)), dtype=np.float64)
    cand = torch.tensor(list(candidates), device=lm.device)
    for k, c in enumerate(continuations):
        if not c:
            raise ValueError(f"continuations[{k}]: empty")
        if length + len(c) > lm.max_context:
            raise ContextOverflowError(f"continuations[{k}]: {length} + {len(c)} tokens exceed the model "
                                       f"context of {lm.max_context}")
    for start in range(0, len(continuations), batch_size):
        chunk = [list(c) for c in continuations[start:start + batch_size]]
        width = max(len(c) for c in chunk)
        ids = torch.full((len(chunk), width), lm.pad_id, dtype=torch.long)
        for b, c in enumerate(chunk):
            ids[b, :len(c)] = torch.tensor(c)
        rows = copy.deepcopy(cache)
        rows.batch_repeat_interleave(len(chunk))
        positions = torch.arange(length, length + width, device=lm.device).expand(len(chunk), -1)
        mask = torch.ones((len(chunk), length + width), dtype=torch.long, device=lm.device)
        logits = lm.model(input_ids=ids.to(lm.device), **with_cache(lm, rows), use_cache=True,
                          position_ids=positions, attention_mask=mask).logits
        last = torch.tensor([len(c) - 1 for c in chunk], device=lm.device)
        picked = logits[torch.arange(len(chunk), device=lm.device), last].float()
        out[start:start + len(chunk)] = torch.log_softmax(picked, dim=-1)[:, cand].double().cpu().numpy()
    return out


@torch.inference_mode()
def continuation_logprobs_after(lm: CausalLM, prefill, continuations: Sequence[Sequence[int]], *,
                                batch_size: int = 8) -> list[np.ndarray]:
    """``log p(c_t | prompt, c_<t)`` for several continuations of one prompt already run
    (``prefill`` from :meth:`~franq.lm.model.CausalLM.prefill`; its cache is not modified):
    the prompt costs one pass however many answers are scored after it. The first token
    reads the prefill's logits; the rest run right-padded in batches on a copy of the cache."""
    first = torch.log_softmax(prefill.logits.reshape(-1).float(), dim=-1)
    out = []
    for k, c in enumerate(continuations):
        if not c:
            raise ValueError(f"continuations[{k}]: empty")
        if prefill.length + len(c) > lm.max_context:
            raise ContextOverflowError(f"continuations[{k}]: {prefill.length} + {len(c)} tokens exceed the model "
                                       f"context of {lm.max_context}")
        out.append(np.array([float(first[c[0]])], dtype=np.float64))
    longer = [k for k, c in enumerate(continuations) if len(c) > 1]
    for start in range(0, len(longer), batch_size):
        chunk = [list(continuations[k]) for k in longer[start:start + batch_size]]
        width = max(len(c) for c in chunk) - 1  # feed all but the last token of each
        ids = torch.full((len(chunk), width), lm.pad_id, dtype=torch.long)
        for b, c in enumerate(chunk):
            ids[b, :len(c) - 1] = torch.tensor(c[:-1])
        rows = copy.deepcopy(prefill.cache)
        rows.batch_repeat_interleave(len(chunk))
        positions = torch.arange(prefill.length, prefill.length + width, device=lm.device).expand(len(chunk), -1)
        mask = torch.ones((len(chunk), prefill.length + width), dtype=torch.long, device=lm.device)
        logp = torch.log_softmax(lm.model(input_ids=ids.to(lm.device), **with_cache(lm, rows), use_cache=True,
                                          position_ids=positions, attention_mask=mask).logits.float(), dim=-1)
        for b, c in enumerate(chunk):
            nxt = torch.tensor(c[1:], device=lm.device)
            rest = logp[b, :len(c) - 1].gather(1, nxt[:, None])[:, 0].double().cpu().numpy()
            k = longer[start + b]
            out[k] = np.concatenate([out[k], rest])
    return out


def length_batches(order: list[int], lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Group indices (sorted by decreasing length) so padded size stays under ``max_tokens``
    and no sequence is padded by more than a quarter of the batch width."""
    batches: list[list[int]] = []
    for i in order:
        if batches:
            cur = batches[-1]
            width = lengths[cur[0]]
            if (len(cur) + 1) * width <= max_tokens and lengths[i] >= 0.75 * width:
                cur.append(i)
                continue
        batches.append([i])
    return batches


def _left_pad(lm: CausalLM, seqs: Sequence[Sequence[int]]):
    """Left-padded ids, attention mask and mask-following position ids, on the device."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), lm.pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for b, seq in enumerate(seqs):
        if seq:
            ids[b, width - len(seq):] = torch.tensor(list(seq))
            mask[b, width - len(seq):] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids.to(lm.device), mask.to(lm.device), positions.to(lm.device)


def _score_batch(lm: CausalLM, pairs, index, results, spec=None, internals=None) -> None:
    """One left-padded forward pass over ``pairs``. The LM head runs only at the
    positions that predict continuation tokens, row by row: padded batches mix answers
    of different lengths, and the head (vocabulary x hidden) is the largest matrix a
    small model multiplies per position."""
    seqs = [list(p) + list(c) for p, c in pairs]
    width = max(len(s) for s in seqs)
    rows = [b for b, (_, c) in enumerate(pairs) for _ in c]
    if not rows:
        for i in index:
            results[i] = np.zeros(0, dtype=np.float64)
            if spec:
                internals[i] = TokenInternals()
        return
    cols = [width - len(c) - 1 + t for _, c in pairs for t in range(len(c))]  # position t predicts t + 1
    ids, mask, positions = _left_pad(lm, seqs)
    rows_t, cols_t = torch.tensor(rows, device=lm.device), torch.tensor(cols, device=lm.device)
    selected = []  # the head's input was cut to the answer positions (a model may bypass its head module)

    def select(_, args):
        selected.append(True)
        return (args[0][rows_t, cols_t][None], *args[1:])

    head = lm.model.get_output_embeddings()
    hook = None if head is None else head.register_forward_pre_hook(select)
    rows_at = [capture.Row(width - len(s), width - len(c), width) for s, (_, c) in zip(seqs, pairs)]
    watch = capture.capturing(lm.model, spec, rows_at) if spec else contextlib.nullcontext()
    try:
        with watch as cap:
            logits = lm.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False).logits
    finally:
        if hook is not None:
            hook.remove()
    if cap is not None:
        for i, got in zip(index, cap.results()):
            internals[i] = got
    logits = logits[0] if selected else logits[rows_t, cols_t]  # (answer tokens, vocabulary)
    picked = logits.gather(1, ids[rows_t, cols_t + 1][:, None])[:, 0].float()
    top_k = min(getattr(spec, "top_k", 0) or 0, logits.shape[-1])
    top_ids, top_lp = [], []
    for k in range(0, len(rows), LSE_CHUNK):  # float32 in cache-sized pieces
        lse = torch.logsumexp(logits[k:k + LSE_CHUNK].float(), dim=-1)
        picked[k:k + LSE_CHUNK] -= lse
        if top_k:
            v, i = logits[k:k + LSE_CHUNK].float().topk(top_k, dim=-1)
            top_ids.append(i.cpu().numpy())
            top_lp.append((v - lse[:, None]).double().cpu().numpy())
    picked = picked.double().cpu().numpy()
    start = 0
    for i, (_, c) in zip(index, pairs):
        results[i] = picked[start:start + len(c)]
        if top_k:
            internals[i].alternatives = (np.concatenate(top_ids)[start:start + len(c)],
                                         np.concatenate(top_lp)[start:start + len(c)])
        start += len(c)
