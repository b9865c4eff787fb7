"""Read attention and hidden-state signals out of the teacher-forced passes, reduced as they go.

Lookback Lens (Chuang et al., 2024), hidden-state probes (SAPLMA, semantic-entropy probes)
and RAUQ (Vazhentsev et al., 2025) read the internals of the very forward pass FRANQ already
runs over [prompt, answer]. :func:`capturing` wraps the model's attention function (the
``transformers`` attention interface) and forward hooks on the decoder layers so that a pass
keeps, per answer token, only:

    lookback   (T, layers, heads)  Lookback Lens ratio while predicting answer token t:
               mean attention on the prompt tokens / (that + mean attention on the answer
               tokens before t); 1.0 for the first answer token (no answer token yet)
    prev_attn  (T, layers, heads)  attention of answer token t on the token before it (RAUQ)
    hidden     {layer: (T, d)}     hidden state after decoder layer ``layer`` at token t

(The closed-book pass is captured the same way for hidden states only, when a component's
spec names ``closed_hidden_layers``; :class:`~franq.evidence.passes.TokenPasses` runs it.)

Nothing of size (sequence x sequence) is kept: for each layer the attention rows of the
answer positions only are recomputed from the layer's own (rotated) queries and keys,
``softmax(q k^T * scaling)`` under the causal and padding masks, in chunks of
``QUERY_CHUNK`` rows, and reduced at once. The attention output itself is computed by the
model's own attention function, untouched, so the pass's log-probabilities are exactly those
of a pass without capture. The recomputation assumes plain causal softmax attention (no
sliding window, no logit soft-capping); such models keep exact scores but approximate features.
"""
from __future__ import annotations

import contextlib
import sys
import threading
from dataclasses import dataclass, field

import numpy as np

from franq.errors import InputError

QUERY_CHUNK = 128
"""Answer positions per recomputed attention block: heads x chunk x sequence floats."""

_ACTIVE = threading.local()  # the capture in progress in this thread, if any
_WRAPPED: dict[str, str] = {}  # wrapper name -> original attention implementation


@dataclass(frozen=True)
class CaptureSpec:
    """What the passes keep: from the with-passages pass the attention reductions and the
    hidden states at ``hidden_layers`` (decoder layer indices, 0-based; negative counts from
    the last); from the closed-book pass the hidden states at ``closed_hidden_layers``."""

    attention: bool = True
    hidden_layers: tuple[int, ...] = ()
    closed_hidden_layers: tuple[int, ...] = ()
    top_k: int = 0
    """Keep, per answer token of the with-passages pass, the ``top_k`` most likely tokens and
    their log-probabilities (``TokenInternals.alternatives``; CCP reads them)."""

    def __bool__(self) -> bool:
        return self.attention or bool(self.hidden_layers) or bool(self.closed_hidden_layers) or self.top_k > 0

    @property
    def rag(self) -> CaptureSpec:
        """What the with-passages pass keeps."""
        return CaptureSpec(self.attention, self.hidden_layers, top_k=self.top_k)

    @property
    def closed(self) -> CaptureSpec | None:
        """What the closed-book pass keeps (hidden states only), or None."""
        return CaptureSpec(False, self.closed_hidden_layers) if self.closed_hidden_layers else None

    def union(self, other: CaptureSpec | None) -> CaptureSpec:
        if other is None:
            return self
        return CaptureSpec(self.attention or other.attention,
                           tuple(sorted(set(self.hidden_layers) | set(other.hidden_layers))),
                           tuple(sorted(set(self.closed_hidden_layers) | set(other.closed_hidden_layers))),
                           max(self.top_k, other.top_k))


@dataclass
class TokenInternals:
    """The captured internals of one answer (see the module docstring); float32 arrays."""

    lookback: np.ndarray | None = None
    prev_attn: np.ndarray | None = None
    hidden: dict[int, np.ndarray] = field(default_factory=dict)
    alternatives: tuple[np.ndarray, np.ndarray] | None = None
    """``(ids, logprobs)``, each ``(T, k)``: the k most likely tokens at each answer position
    (with ``CaptureSpec.top_k``), most likely first."""

    def pooled(self, positions, what: str, layers=None) -> np.ndarray:
        """The mean over token ``positions`` of ``lookback`` / ``prev_attn`` (flattened
        layers x heads) or of ``hidden`` at ``layers`` (concatenated)."""
        pos = list(positions)
        if not pos:
            raise ValueError("no token positions to pool over")
        if what == "hidden":
            missing = [la for la in layers if la not in self.hidden]
            if missing:
                raise ValueError(f"hidden states of layer(s) {missing} were not captured; have {sorted(self.hidden)}")
            return np.concatenate([self.hidden[la][pos].mean(0) for la in layers])
        arr = getattr(self, what)
        if arr is None:
            raise ValueError(f"{what} was not captured")
        return arr[pos].mean(0).reshape(-1)


@dataclass
class Row:
    """Where one sequence of a left-padded batch sits: its first real position, the first
    answer position, and the width of the batch."""

    pad: int
    answer_start: int
    width: int


class _Capture:
    def __init__(self, spec: CaptureSpec, rows: list[Row], n_layers: int):
        self.spec, self.rows, self.n_layers = spec, rows, n_layers
        self.lookback = [[None] * n_layers for _ in rows]
        self.prev = [[None] * n_layers for _ in rows]
        self.hidden: list[dict[int, np.ndarray]] = [{} for _ in rows]

    def attend(self, layer: int, query, key, scaling: float) -> None:
        """Reduce the attention rows of the answer positions of every sequence at ``layer``."""
        import torch

        groups = query.shape[1] // key.shape[1]
        for b, r in enumerate(self.rows):
            n = r.width - r.answer_start  # answer tokens; query rows answer_start-1 .. width-1
            k = key[b, :, r.pad:r.width].float().repeat_interleave(groups, dim=0)  # (H, S, D)
            p_len = r.answer_start - r.pad
            look, prev = [], []
            for start in range(0, n + 1, QUERY_CHUNK):
                stop = min(start + QUERY_CHUNK, n + 1)
                q = query[b, :, r.answer_start - 1 + start:r.answer_start - 1 + stop].float()
                scores = (q @ k.transpose(1, 2)) * scaling  # (H, rows, S)
                qpos = torch.arange(p_len - 1 + start, p_len - 1 + stop, device=q.device)  # relative to pad
                allowed = torch.arange(k.shape[1], device=q.device)[None, :] <= qpos[:, None]
                probs = scores.masked_fill(~allowed, float("-inf")).softmax(-1)
                ctx = probs[:, :, :p_len].mean(-1)
                seen = torch.arange(start, stop, device=q.device).clamp(min=1)  # answer tokens visible
                new = probs[:, :, p_len:].sum(-1) / seen
                look.append((ctx / (ctx + new)).T)
                before = (qpos - 1).clamp(min=0)[None, :, None].expand(probs.shape[0], -1, 1)
                prev.append(probs.gather(2, before)[..., 0].T)  # attention on the token before
            look_t, prev_t = torch.cat(look), torch.cat(prev)
            self.lookback[b][layer] = look_t[:n].cpu().numpy()  # row t predicts answer token t
            self.prev[b][layer] = prev_t[1:].cpu().numpy()  # row t + 1 is answer token t itself

    def keep_hidden(self, layer: int, hidden) -> None:
        for b, r in enumerate(self.rows):
            self.hidden[b][layer] = hidden[b, r.answer_start:r.width].float().cpu().numpy()

    def results(self) -> list[TokenInternals]:
        out = []
        for b in range(len(self.rows)):
            ti = TokenInternals(hidden=self.hidden[b])
            if self.spec.attention:
                ti.lookback = np.stack(self.lookback[b], axis=1).astype(np.float32)
                ti.prev_attn = np.stack(self.prev[b], axis=1).astype(np.float32)
            out.append(ti)
        return out


def decoder_layers(model):
    """The model's list of decoder layers (``model.model.layers`` for Llama-style models)."""
    base = getattr(model, "model", None) or model.get_decoder()
    layers = getattr(base, "layers", None)
    if layers is None:
        raise ValueError(f"{type(model).__name__}: cannot find its decoder layers to capture hidden states")
    return layers


def _wrapper_for(impl: str) -> str:
    """Register (once) an attention function that runs ``impl`` and, when a capture is
    active in this thread, also reduces the answer rows; return its name."""
    name = f"franq_capture_{impl}"
    if name in _WRAPPED:
        return name
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, AttentionInterface

    def attention(module, query, key, value, attention_mask, **kwargs):
        original = ALL_ATTENTION_FUNCTIONS[impl] if impl in ALL_ATTENTION_FUNCTIONS else \
            sys.modules[type(module).__module__].eager_attention_forward
        cap = getattr(_ACTIVE, "capture", None)
        if cap is not None and cap.spec.attention:
            scaling = kwargs.get("scaling") or query.shape[-1] ** -0.5
            cap.attend(module.layer_idx, query, key, scaling)
        return original(module, query, key, value, attention_mask, **kwargs)

    AttentionInterface.register(name, attention)
    mask = ALL_MASK_ATTENTION_FUNCTIONS._global_mapping.get(impl)
    if mask is None:
        from transformers.masking_utils import eager_mask
        mask = eager_mask
    AttentionMaskInterface.register(name, mask)
    _WRAPPED[name] = impl
    return name


@contextlib.contextmanager
def capturing(model, spec: CaptureSpec, rows: list[Row]):
    """Within the block, forward passes of ``model`` over the batch described by ``rows``
    record what ``spec`` asks; the block yields the :class:`_Capture` to read after."""
    layers = decoder_layers(model)
    n_layers = len(layers)
    cap = _Capture(spec, rows, n_layers)
    config = model.config
    impl = config._attn_implementation or "eager"
    if spec.attention and not impl.startswith("franq_capture_"):
        # a wrapper that runs the same attention: it stays installed and is a no-op
        # outside a capture (other threads sharing the model are unaffected)
        config._attn_implementation = _wrapper_for(impl)
    bad = [la for la in spec.hidden_layers if not -n_layers <= la < n_layers]
    if bad:
        raise InputError(f"probe 'features.layers': layer {bad[0]} does not exist; the model has {n_layers} "
                         f"decoder layers (0 to {n_layers - 1}); the probe was fitted for another model")
    hooks = []
    for la in spec.hidden_layers:
        idx = la % n_layers
        hooks.append(layers[idx].register_forward_hook(
            lambda _m, _a, out, idx=idx, la=la: cap.keep_hidden(la, out[0] if isinstance(out, tuple) else out)))
    _ACTIVE.capture = cap
    try:
        yield cap
    finally:
        _ACTIVE.capture = None
        for h in hooks:
            h.remove()
