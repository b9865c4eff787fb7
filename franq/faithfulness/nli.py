"""NLI faithfulness: any local transformers sequence-classification NLI model.

P_faithful = P(entailment | premise = passage chunk, hypothesis = claim), the max over the
context's chunks (about 350 words each, cut at sentence boundaries; never truncated). The
entailment label's index is read from the model's ``config.id2label``. Higher = more
likely supported. Loads from a local directory or the local Hugging Face cache only.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from franq.errors import InputError, ModelNotFoundError
from franq.faithfulness.chunks import ChunkedPairScorer
from franq.lm.load import check_model_dir, checkpoint_error, first_line, is_unsafe_pickle, resolve_device
from franq.settings import Setting

log = logging.getLogger(__name__)


def entailment_index(id2label: dict) -> int:
    """The index whose label names entailment (``entailment``, ``ENTAILMENT``, ``entails``)."""
    hits = [int(i) for i, label in id2label.items() if str(label).lower().startswith("entail")]
    if len(hits) != 1:
        raise InputError(f"nli_model: config.id2label must name exactly one entailment label, "
                         f"got {dict(id2label)}")
    return hits[0]


class NLIFaithfulness:
    """P(entailment) of the claim given the best passage chunk."""

    needs = frozenset()
    settings = (Setting("model", str, None, "a local sequence-classification NLI model directory", required=True),)
    """``[faithfulness.nli]``."""

    @classmethod
    def from_config(cls, config, lm=None) -> NLIFaithfulness:
        return cls(config.settings_for("faithfulness", "nli")["model"], device=config.model.device)

    def __init__(self, model: str | Path, *, device: str | None = None, max_length: int = 512,
                 max_batch_tokens: int = 8192, chunk_words: int = 350):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.device = resolve_device(device)
        if model is None:
            raise ModelNotFoundError("nli_model: not set; give a local NLI model directory")
        check_model_dir(str(model), "nli_model")
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # transformers' "Loading weights" bar: franq logs its own line
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(model, local_files_only=True)
        except OSError as exc:
            if is_unsafe_pickle(exc):
                raise checkpoint_error("nli_model", model, exc) from None
            raise ModelNotFoundError(f"nli_model: cannot load {model!r} from a local directory or the "
                                     f"local Hugging Face cache (franq never downloads): {first_line(exc)}") from None
        except Exception as exc:  # noqa: BLE001 - transformers raises many types for a broken directory
            raise checkpoint_error("nli_model", model, exc) from None
        self.model.to(self.device).eval()
        self.entail = entailment_index(self.model.config.id2label)
        limit = getattr(self.tokenizer, "model_max_length", max_length) or max_length
        positions = getattr(self.model.config, "max_position_embeddings", None)
        if positions and getattr(self.model.config, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
            positions -= 2  # positions start after padding_idx
        self.name = f"nli:{Path(str(model)).name}"
        self.max_length = min(max_length, limit, positions or max_length)
        """The most tokens one (premise, hypothesis) pair may take (the model's positions)."""
        self._pairs = ChunkedPairScorer(self.tokenizer, self._forward, max_length=self.max_length,
                                        max_batch_tokens=max_batch_tokens, chunk_words=chunk_words,
                                        split_claim=False)
        log.info("loaded %s on %s (entailment = label %d)", self.name, self.device, self.entail)

    @torch.inference_mode()
    def _forward(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        enc = self.tokenizer(premises, hypotheses, padding=True, truncation=False, return_tensors="pt")
        logits = self.model(**{k: v.to(self.device) for k, v in enc.items()}).logits.float()
        return torch.softmax(logits, dim=-1)[:, self.entail].double().cpu().numpy()

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        """P(entailment) for each ``(context, claim)``, max over context chunks."""
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        return self._pairs.score(pairs)
