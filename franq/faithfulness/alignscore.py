"""AlignScore (Zha et al., 2023): FRANQ's P_faithful (paper section 2.2, appendix C).

Our own inference for the published AlignScore checkpoints (``AlignScore-base.ckpt``,
``AlignScore-large.ckpt``): a PyTorch Lightning checkpoint whose ``state_dict`` holds a
RoBERTa encoder under ``base_model.*``, its masked-LM head under ``mlm_head.*`` (unused
at inference) and three linear heads on the encoder's pooler output: ``bin_layer`` (2),
``tri_layer`` (3: aligned / contradict / neutral) and ``reg_layer`` (1).

Score ("nli_sp", what the paper uses for claims): the context is split into chunks of
about 350 words at sentence boundaries and the claim into sentences; every (chunk, claim
sentence) pair gets ``softmax(tri_layer)[aligned]``; the claim's score is the max over
chunks, averaged over its sentences. Higher = more likely supported.

franq never downloads: ``checkpoint`` is a local ``.ckpt`` file and ``base_model`` a local
directory holding the encoder's ``config.json`` and tokenizer (``roberta-base`` for the
base checkpoint, ``roberta-large`` for the large one).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from franq.errors import FranqError, ModelNotFoundError
from franq.faithfulness.chunks import ChunkedPairScorer
from franq.lm.load import resolve_device
from franq.settings import Setting

log = logging.getLogger(__name__)

ALIGNED = 0  # tri_layer label order: aligned, contradict, neutral
HEADS = {"bin_layer": 2, "tri_layer": 3, "reg_layer": 1}
# Buffers older transformers saved in the encoder's state dict; harmless to ignore.
IGNORED_KEYS = ("base_model.embeddings.position_ids",)


class AlignScoreCheckpointError(FranqError, ValueError):
    """The checkpoint does not have the AlignScore layout; the message lists the keys."""


class AlignModel(nn.Module):
    """The AlignScore network without the masked-LM head: encoder + the three heads."""

    def __init__(self, config):
        super().__init__()
        from transformers import RobertaModel

        self.base_model = RobertaModel(config, add_pooling_layer=True)
        for name, size in HEADS.items():
            setattr(self, name, nn.Linear(config.hidden_size, size))

    def forward(self, **encoded) -> torch.Tensor:
        """``softmax(tri_layer(pooler_output))``, shape ``(batch, 3)``."""
        pooled = self.base_model(**encoded).pooler_output
        return torch.softmax(self.tri_layer(pooled).float(), dim=-1)


def load_state_dict(checkpoint: str | Path) -> dict[str, torch.Tensor]:
    """The tensors of a Lightning checkpoint (``{"state_dict": ...}``) or a bare state dict,
    read with ``weights_only=True`` (no code from the file is run)."""
    path = Path(checkpoint)
    if not path.is_file():
        raise ModelNotFoundError(f"alignscore_checkpoint: no file at {path} (franq never downloads; "
                                 "download AlignScore-base.ckpt or AlignScore-large.ckpt yourself)")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types for bad files
        from franq.lm.load import checkpoint_error

        raise AlignScoreCheckpointError(str(checkpoint_error("alignscore_checkpoint", path, exc))) from None
    state = obj.get("state_dict", obj) if isinstance(obj, dict) else None
    if not isinstance(state, dict):
        raise AlignScoreCheckpointError(f"alignscore_checkpoint: {path} holds no state_dict")
    return state


def check_keys(state: dict, expected: Sequence[str], *, source: str) -> None:
    """Raise listing missing and unexpected keys; ``mlm_head.*`` and known buffers are allowed."""
    present = set(state)
    missing = sorted(set(expected) - present)
    unexpected = sorted(k for k in present - set(expected)
                        if not k.startswith("mlm_head.") and k not in IGNORED_KEYS)
    if missing or unexpected:
        def show(keys):
            return ", ".join(keys[:12]) + (f" ... ({len(keys)} in all)" if len(keys) > 12 else "") or "none"
        raise AlignScoreCheckpointError(
            f"alignscore_checkpoint {source}: not an AlignScore checkpoint for this encoder config; "
            f"missing keys: {show(missing)}; unexpected keys: {show(unexpected)}")


class AlignScoreFaithfulness:
    """P_faithful from an AlignScore checkpoint (nli_sp). Load once; reuse."""

    needs = frozenset()
    settings = (  # [faithfulness.alignscore]
        Setting("checkpoint", str, None, "an AlignScore .ckpt file (e.g. AlignScore-large.ckpt)", required=True),
        Setting("base_model", str, None, "a local roberta-base / roberta-large directory (the checkpoint's encoder)",
                required=True),
    )

    @classmethod
    def from_config(cls, config, lm=None) -> AlignScoreFaithfulness:
        s = config.settings_for("faithfulness", "alignscore")
        return cls(s["checkpoint"], s["base_model"], device=config.model.device)

    def __init__(self, checkpoint: str | Path, base_model: str | Path, *, device: str | None = None,
                 max_length: int = 512, max_batch_tokens: int = 8192, dtype: torch.dtype | None = None):
        from transformers import AutoTokenizer, RobertaConfig

        base = Path(base_model)
        if not (base / "config.json").is_file():
            raise ModelNotFoundError(f"alignscore_base_model: {base} must be a local directory holding "
                                     "the encoder's config.json and tokenizer (e.g. roberta-large)")
        self.device = resolve_device(device)
        config = RobertaConfig.from_pretrained(base, local_files_only=True)
        self.tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
        self.model = AlignModel(config)
        state = load_state_dict(checkpoint)
        check_keys(state, list(self.model.state_dict()), source=str(checkpoint))
        try:
            self.model.load_state_dict({k: v for k, v in state.items() if k in self.model.state_dict()})
        except RuntimeError as exc:  # shape mismatch: wrong base model for this checkpoint
            raise AlignScoreCheckpointError(
                f"alignscore_checkpoint {checkpoint}: tensor shapes do not match the encoder config "
                f"in {base} (base checkpoints need roberta-base, large ones roberta-large): {exc}") from None
        self.model.to(self.device, dtype=dtype or torch.float32).eval()
        max_pos = int(config.max_position_embeddings) - 2  # RoBERTa positions start after padding_idx
        self.name = f"alignscore:{Path(checkpoint).name}"
        self._pairs = ChunkedPairScorer(self.tokenizer, self._forward, max_length=min(max_length, max_pos),
                                        max_batch_tokens=max_batch_tokens, split_claim=True)
        log.info("loaded %s on %s", self.name, self.device)

    @torch.inference_mode()
    def _forward(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        enc = self.tokenizer(premises, hypotheses, padding=True, truncation=False, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        return self.model(**enc)[:, ALIGNED].double().cpu().numpy()

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        """AlignScore nli_sp for each ``(context, claim)``: higher = more likely supported."""
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        return self._pairs.score(pairs)
