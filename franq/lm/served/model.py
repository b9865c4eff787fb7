"""ServedLM: the causal LM the pipeline uses, with inference on a server.

It is a :class:`~franq.lm.model.CausalLM` as far as the evidence stages, the answering
and trust apps and ``franq answer`` can tell: prompts, token ids and character offsets
come from a local tokenizer (the served model's own, named in ``[model] tokenizer``), so
claims map to tokens exactly as in-process; the teacher-forced passes, samples and
generations go to the server through its engine adapter, all requests of a call at once
(at most ``in_flight`` open). What reads the model's internals (attention, hidden states,
a KV cache kept between calls) is refused with the reason.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from franq.errors import ContextOverflowError, ModelNotFoundError
from franq.lm.model import CausalLM
from franq.lm.sampling import Generation, Sample, SampleSet
from franq.lm.served.base import Draw, Engine, SampleParams, ScoreItem
from franq.lm.served.client import ServedModelError, ServerClient

WHITE_BOX = ("reads the model's internals (attention, hidden states or a kept KV cache), which a served model "
             "does not expose; use an in-process model ([model] path, no server) for it")


class WhiteBoxError(ServedModelError):
    pass


@dataclass(frozen=True)
class ServedPrefill:
    """A prompt to continue: a server keeps no cache between calls, so this is its ids."""

    ids: tuple[int, ...]

    @property
    def length(self) -> int:
        return len(self.ids)


class ServedLM(CausalLM):
    """A served model behind the CausalLM interface. Build with :func:`franq.lm.served.connect`."""

    def __init__(self, client: ServerClient, engine: Engine, tokenizer, *, name: str, max_context: int,
                 capabilities=None):
        self.model = None
        self.client = client
        self.engine = engine
        self.tokenizer = tokenizer
        self.name = name
        self.device = torch.device("cpu")
        self.max_context = max_context
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
        self.supports_logits_to_keep = False
        self._sampler = None
        self.capabilities = capabilities

    # ------------------------------------------------------------------ teacher forcing
    def _item(self, prompt_ids, answer_ids) -> ScoreItem:
        decode = self.tokenizer.decode
        return ScoreItem(tuple(prompt_ids), tuple(answer_ids), decode(list(prompt_ids), skip_special_tokens=False),
                         decode(list(answer_ids), skip_special_tokens=False))

    def continuation_logprobs(self, items: Sequence[tuple[Sequence[int], Sequence[int]]], *,
                              max_batch_tokens: int = 4096) -> list[np.ndarray]:
        """``log p(c_t | prompt, c_<t)`` for each ``(prompt_ids, continuation_ids)``: one request
        per item, all in flight together (``max_batch_tokens`` is the server's business)."""
        caps = self.capabilities
        if caps is not None and caps.prompt_logprobs is not None:
            raise ServedModelError(caps.refusal())
        for k, (p, c) in enumerate(items):
            if not p:
                raise ValueError(f"items[{k}]: prompt is empty")
            if len(p) + len(c) > self.max_context:
                raise ContextOverflowError(f"items[{k}]: {len(p)} prompt + {len(c)} answer tokens exceed the model "
                                           f"context of {self.max_context}")
        scored = [self._item(p, c) for p, c in items]
        todo = [it for it in scored if it.answer_ids]
        bodies = iter(self.client.post_all([self.engine.score_request(it) for it in todo]))
        return [np.asarray(self.engine.read_score(next(bodies), it) if it.answer_ids else [], dtype=np.float64)
                for it in scored]

    def captured_logprobs(self, items, spec, **_):
        raise WhiteBoxError(f"internals: {WHITE_BOX}")

    def answer_pass(self, prompt_ids, answer_ids):
        raise WhiteBoxError(f"answer_pass (follow-up questions on a kept cache): {WHITE_BOX}")

    def next_token_logprobs_after(self, *args, **kwargs):
        raise WhiteBoxError(f"next_token_logprobs_after (a kept cache): {WHITE_BOX}")

    def next_token_logprobs(self, prompts, candidates, *, max_batch_tokens: int = 4096) -> np.ndarray:
        """``log p(candidate | prompt)``: each candidate teacher-forced as a one-token answer."""
        pairs = [(p, [c]) for p in prompts for c in candidates]
        lps = self.continuation_logprobs(pairs)
        return np.array([lp[0] for lp in lps], dtype=np.float64).reshape(len(prompts), len(candidates))

    def prefill(self, prompt_ids: Sequence[int]) -> ServedPrefill:
        return ServedPrefill(tuple(prompt_ids))

    def continuation_logprobs_after(self, prefill: ServedPrefill, continuations, *, batch_size: int = 8):
        for k, c in enumerate(continuations):
            if not c:
                raise ValueError(f"continuations[{k}]: empty")
        return self.continuation_logprobs([(prefill.ids, c) for c in continuations])

    # ------------------------------------------------------------------ generation
    def sample(self, prompt_ids: Sequence[int], n: int, *, temperature: float = 1.0, top_p: float = 1.0,
               top_k: int = 0, max_new_tokens: int = 32, stop_at_newline: bool = True, seed: int | None = 0,
               greedy_first: bool = False, prefill=None) -> SampleSet:
        """``n`` answers (row 0 greedy with ``greedy_first``), from one request with ``n`` where
        the engine takes it (else one per sample); each sample's log-probabilities are the
        server's, cut at the first line break after text as the in-process sampler does."""
        if not prompt_ids:
            raise ValueError("prompt_ids: the prompt is empty")
        text = self.tokenizer.decode(list(prompt_ids), skip_special_tokens=False)
        groups = []
        if greedy_first:
            groups.append(self.engine.sample_requests(prompt_ids, text, SampleParams(1, 0.0, max_tokens=max_new_tokens,
                                                                                     seed=seed)))
        drawn = n - (1 if greedy_first else 0)
        if drawn > 0:
            groups.append(self.engine.sample_requests(prompt_ids, text, SampleParams(
                drawn, temperature, top_p, top_k, max_new_tokens, seed)))
        bodies = iter(self.client.post_all([r for g in groups for r in g]))
        draws = [d for g in groups for d in self.engine.read_samples([next(bodies) for _ in g])]
        if len(draws) != n:
            raise self.engine.fail(f"asked for {n} samples, the server returned {len(draws)}")
        return SampleSet(tuple(self._sample(d, stop_at_newline) for d in draws), len(prompt_ids))

    def _sample(self, d: Draw, stop_at_newline: bool) -> Sample:
        pieces = d.tokens if d.ids is None or any(d.tokens) else tuple(self.tokenizer.decode([i]) for i in d.ids)
        keep, stop, started = len(d.logprobs), d.finish, False
        for t, piece in enumerate(pieces[:len(d.logprobs)]):
            if stop_at_newline and "\n" in piece and (started or piece.split("\n", 1)[0].strip()):
                keep, stop = t + 1, "newline"
                break
            started |= bool(piece.strip())
        text = d.text
        if stop_at_newline:
            text = text.lstrip().split("\n", 1)[0]
        text = text.strip()
        ids = tuple(d.ids[:keep]) if d.ids is not None else tuple(self.encode(text))
        lps = tuple(d.logprobs[:keep])
        return Sample(text, ids, lps, float(np.sum(lps, dtype=np.float64)) if lps else math.nan, stop)

    def generate(self, prompt_ids: Sequence[int], *, max_new_tokens: int = 256) -> Generation:
        """The greedy answer, as :func:`franq.lm.sampling.generate` returns it. Where the engine
        returns token ids they are the answer's tokens and the server's log-probabilities are
        kept; otherwise (llama-cpp-python) the text is re-read with the local tokenizer and
        teacher-forced once more (one request)."""
        text = self.tokenizer.decode(list(prompt_ids), skip_special_tokens=False)
        reqs = self.engine.sample_requests(prompt_ids, text, SampleParams(1, 0.0, max_tokens=max_new_tokens, seed=0))
        draws = self.engine.read_samples(self.client.post_all(reqs))
        if len(draws) != 1:
            raise self.engine.fail(f"asked for 1 generated answer, the server returned {len(draws)}")
        d = draws[0]
        if d.ids is not None:
            special = set(self.tokenizer.all_special_ids)
            n = len(d.ids)
            while n and d.ids[n - 1] in special:
                n -= 1
            ids = list(d.ids[:n])
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            return Generation(text, tuple(ids), tuple(d.logprobs[:n]), tuple(self.decode_offsets(ids, text)))
        ids, offsets = self.encode_answer(d.text)
        lps = self.continuation_logprobs([(prompt_ids, ids)])[0].tolist() if ids else []
        return Generation(d.text, tuple(ids), tuple(lps), tuple(tuple(o) for o in offsets))


def load_tokenizer(source: str):
    """The local tokenizer named by ``[model] tokenizer`` (or ``path``): ``embedded`` (the
    embedded SmolLM2's), a GGUF file, a directory holding tokenizer files (weights are not
    needed), or a name in the local Hugging Face cache; and the model context its config
    declares (None when there is no config)."""
    from transformers import AutoConfig, AutoTokenizer

    from franq.lm.load import check_gguf, dequantized_cache, embedded_gguf_path

    path = Path(source).expanduser()
    if source == "embedded":
        where, kwargs = dequantized_cache(embedded_gguf_path()), {}
    elif path.is_file():
        check_gguf(path, "model.tokenizer")
        where, kwargs = dequantized_cache(path), {}
    elif path.is_dir():
        where, kwargs = path, {}
    elif path.is_absolute() or source.startswith((".", "~")) or source.count("/") > 1:
        raise ModelNotFoundError(f"model.tokenizer: no directory or file at {source}")
    else:
        where, kwargs = source, {"local_files_only": True}
    try:
        tokenizer = AutoTokenizer.from_pretrained(where, **kwargs)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelNotFoundError(f"model.tokenizer: cannot load a tokenizer from {source!r} (a directory, a GGUF "
                                 f"file, 'embedded' or a name in the local Hugging Face cache): {first}") from None
    try:
        context = getattr(AutoConfig.from_pretrained(where, **kwargs), "max_position_embeddings", None)
    except (OSError, ValueError):
        context = None
    return tokenizer, context
