"""Sufficient context raters (paper 003 section 3): is there enough in the passages to
infer an answer to the question? Each rater returns P(sufficient) in [0, 1] per item
(higher = more likely sufficient); a hard label is ``P >= 0.5`` unless a rater says
otherwise (a rater's ``threshold`` attribute: ``nli_gold`` uses 003's 0.05).

    rater                 needs gold answers   what it does
    autorater             no                   003's 1-shot chain-of-thought prompt (C.1) on any chat
                                               model; reads the JSON verdict {"Sufficient Context": 0|1}
    label                 no                   FLAMe-style prompt (C.2), context cut into 1600-token
                                               chunks, P(sufficient) from label-word log-probabilities,
                                               max over chunks (sufficient if any chunk is)
    contains_gold         yes                  1 if a normalized gold answer occurs in the passages
    nli_gold              yes                  max over passages and gold answers of a faithfulness
                                               backend's P(passage supports "the answer to q is g"),
                                               thresholded

The label rater's default prompt is the corrected one; ``prompt="verbatim"`` keeps 003's
published text, whose two label definitions are swapped.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from datetime import date
from typing import Protocol, runtime_checkable

import numpy as np

from franq.apps.answering.items import QAItem, max_by_owner
from franq import InputError, registry
from franq.apps.answering.prompts import (
    AWF_HYPOTHESIS, SUFFICIENCY_JSON_KEY, SUFFICIENCY_LABEL_TEMPLATES, SUFFICIENCY_LABELS,
    sufficiency_autorater_messages, sufficiency_label_messages,
)

log = logging.getLogger(__name__)


@runtime_checkable
class SufficiencyRater(Protocol):
    name: str

    def rate(self, items: Sequence[QAItem]) -> np.ndarray:
        """P(sufficient context) in [0, 1] for each item."""
        ...


_JSON_VERDICT = re.compile(r"\{[^{}]*?" + re.escape(SUFFICIENCY_JSON_KEY) + r"[^{}]*?\}", re.S)
_LOOSE_VERDICT = re.compile(re.escape(SUFFICIENCY_JSON_KEY) + r"\W{0,6}([01])")


def parse_verdict(text: str) -> int | None:
    """The last ``{"Sufficient Context": 0|1}`` in a reply (a loose ``Sufficient Context: 1``
    when no JSON parses); None when there is none."""
    for block in reversed(_JSON_VERDICT.findall(text)):
        try:
            value = json.loads(block).get(SUFFICIENCY_JSON_KEY)
        except ValueError:
            continue
        if value in (0, 1, "0", "1", True, False):
            return int(value)
    loose = _LOOSE_VERDICT.findall(text)
    return int(loose[-1]) if loose else None


class AutoraterSufficiency:
    """003's 1-shot chain-of-thought autorater on a chat model (``complete(messages)``:
    :class:`franq.lm.chat.LocalChat` or :class:`claims.chat.OpenAIChat`). The verdict is 0
    or 1; a reply without one counts as ``unparsed`` (0.0 by default, logged)."""

    def __init__(self, chat, *, timestamp: str | None = None, max_tokens: int = 512, unparsed: float = 0.0):
        self.chat = chat
        self.timestamp = timestamp or date.today().isoformat()
        self.max_tokens = max_tokens
        self.unparsed = unparsed
        self.name = f"autorater:{chat.name}"
        self.replies: list[str] = []  # the last call's replies (explanations), for inspection

    def rate(self, items: Sequence[QAItem]) -> np.ndarray:
        out, self.replies = [], []
        for it in items:
            reply = self.chat.complete(sufficiency_autorater_messages(it.question, it.context, self.timestamp),
                                       max_tokens=self.max_tokens).text
            self.replies.append(reply)
            verdict = parse_verdict(reply)
            if verdict is None:
                log.warning("%s: no verdict in the reply to %r; counted as %g", self.name, it.question[:60],
                            self.unparsed)
            out.append(self.unparsed if verdict is None else float(verdict))
        return np.array(out, dtype=np.float64)


def token_chunks(text: str, count_tokens, max_tokens: int) -> list[str]:
    """``text`` cut between words into consecutive chunks of at most ``max_tokens`` tokens
    (as ``count_tokens`` counts them)."""
    words = text.split()
    if not words:
        return [text]
    chunks, current = [], []
    for w in words:
        if current and count_tokens(" ".join(current + [w])) > max_tokens:
            chunks.append(" ".join(current))
            current = []
        current.append(w)
    chunks.append(" ".join(current))
    return chunks


class LabelSufficiency:
    """FLAMe-style label-probability rater (003 section 3.2): P(sufficient) of each
    ``chunk_tokens``-token chunk of the context, the max over chunks. ``labeler``:
    :class:`~franq.apps.answering.labelers.LocalLabeler` or :class:`~franq.apps.answering.labelers.OpenAILabeler`."""

    def __init__(self, labeler, *, prompt: str = "corrected", chunk_tokens: int = 1600):
        if prompt not in SUFFICIENCY_LABEL_TEMPLATES:
            raise InputError(f"prompt: expected one of {sorted(SUFFICIENCY_LABEL_TEMPLATES)}, got {prompt!r}")
        self.labeler = labeler
        self.prompt = prompt
        self.chunk_tokens = chunk_tokens
        self.name = f"label:{labeler.name}" + ("" if prompt == "corrected" else f"+{prompt}")

    def _chunks(self, context: str) -> list[str]:
        if self.labeler.count_tokens(context) <= self.chunk_tokens:
            return [context]
        return token_chunks(context, self.labeler.count_tokens, self.chunk_tokens)

    def rate(self, items: Sequence[QAItem]) -> np.ndarray:
        messages, owner = [], []
        for i, it in enumerate(items):
            for chunk in self._chunks(it.context):
                messages.append(sufficiency_label_messages(it.question, chunk, self.prompt))
                owner.append(i)
        p = self.labeler.probability(messages, SUFFICIENCY_LABELS)
        return max_by_owner(p, owner, len(items))


class ContainsGoldSufficiency:
    """1 when a gold answer, normalized as in SQuAD / NQ (lower case, no punctuation, no
    articles), occurs as whole words in the normalized passages (003's "Contains GT")."""

    name = "contains_gold"

    def rate(self, items: Sequence[QAItem]) -> np.ndarray:
        from franq.evaluation.metrics import normalize_answer

        out = []
        for it in items:
            _need_gold(it, self.name)
            text = f" {normalize_answer(it.context)} "
            out.append(float(any(f" {g} " in text for g in map(normalize_answer, it.gold_answers) if g)))
        return np.array(out, dtype=np.float64)


NLI_GOLD_THRESHOLD = 0.05
"""003 appendix A (TRUE-NLI baseline): "Use a threshold of 0.05, where if the maximum
probability is higher then this, then we classify as 'sufficient context'" (the best F1 on
their human-labelled set). Here sufficient = P >= threshold, as every franq threshold."""


class NLIGoldSufficiency:
    """003's TRUE-NLI baseline with any franq faithfulness backend: the max over passages
    and gold answers of P(passage supports 'The answer to the question "q" is: "g"').
    :meth:`rate` returns that probability; :meth:`label` thresholds it at ``threshold``
    (default 0.05, the paper's: :data:`NLI_GOLD_THRESHOLD`)."""

    def __init__(self, backend, *, threshold: float = NLI_GOLD_THRESHOLD):
        self.backend = backend
        self.threshold = threshold
        self.name = f"nli_gold:{backend.name}"

    def rate(self, items: Sequence[QAItem]) -> np.ndarray:
        pairs, owner = [], []
        for i, it in enumerate(items):
            _need_gold(it, self.name)
            for p in it.passages:
                premise = f"{p.title}. {p.text}" if p.title else p.text
                for g in it.gold_answers:
                    pairs.append((premise, AWF_HYPOTHESIS.format(question=it.question, answer=g)))
                    owner.append(i)
        p = np.asarray(self.backend.predict(pairs), dtype=np.float64) if pairs else np.zeros(0)
        return max_by_owner(p, owner, len(items))

    def label(self, items: Sequence[QAItem]) -> np.ndarray:
        return (self.rate(items) >= self.threshold).astype(np.float64)


def _need_gold(item: QAItem, rater: str) -> None:
    if not item.gold_answers:
        raise InputError(f"{rater}: this rater needs 'gold_answers' on every record; question "
                         f"{item.question[:60]!r} has none")


RATERS = ("label", "autorater", "contains_gold", "nli_gold")
"""The built-in raters, components of the kind ``raters`` (declared by :mod:`franq.apps`;
plugins add more through the ``franq.raters`` entry point group): a factory
``make(config, settings, local_lm)`` (``local_lm()``: the config's local model, loaded on
first call) that may declare ``settings`` (its config table, ``[raters.label] prompt = ...``)."""


def make_rater(name: str, config=None, *, lm=None, **given):
    """A rater by name, with its settings from ``config`` (``[raters.NAME]``) and ``given``
    (``base_url=``, ``server_model=``, ``prompt=``, ...; ``None`` values and settings the
    rater does not declare are ignored): ``label`` and ``autorater`` run on an
    OpenAI-compatible server when ``base_url`` is set (``server_model`` names the model),
    else on the local model of ``config`` (or ``lm``); ``nli_gold`` uses the config's
    faithfulness backend."""
    from franq import FranqConfig

    config = config or FranqConfig()
    try:
        make = registry.lookup("raters", name)
    except InputError as exc:
        raise InputError(f"rater: {exc}") from None
    declared = {s.name for s in getattr(make, "settings", ())}
    config = config.with_overrides({f"raters.{name}.{k}": v for k, v in given.items() if k in declared})

    def local_lm():
        if lm is not None:
            return lm
        from franq.lm import CausalLM

        m = config.model
        return CausalLM.load(m.path, gguf_file=m.gguf_file, device=m.device, dtype=m.dtype)

    return make(config, config.settings_for("raters", name), local_lm)


def _server(settings) -> str | None:
    if settings["base_url"] and not settings["server_model"]:
        raise InputError("server_model: name the model the server at base_url should run")
    return settings["base_url"]


def label_rater(config, settings, local_lm):
    from franq.apps.answering.labelers import LocalLabeler, OpenAILabeler

    s = settings
    labeler = (OpenAILabeler(s["server_model"], base_url=s["base_url"], api_key_env=s["api_key_env"]) if _server(s)
               else LocalLabeler(local_lm(), max_batch_tokens=config.batch.max_batch_tokens))
    return LabelSufficiency(labeler, prompt=s["prompt"], chunk_tokens=s["chunk_tokens"])


def autorater(config, settings, local_lm):
    from franq.lm.chat import LocalChat, OpenAIChat

    s = settings
    chat = (OpenAIChat(s["server_model"], base_url=s["base_url"], api_key_env=s["api_key_env"]) if _server(s)
            else LocalChat(local_lm()))
    return AutoraterSufficiency(chat, timestamp=s["timestamp"])


def contains_gold_rater(config, settings, local_lm):
    return ContainsGoldSufficiency()


def nli_gold_rater(config, settings, local_lm):
    needs_lm = config.faithfulness.name in ("judge", "context_pmi", "combined")  # combined: the LM's name
    return NLIGoldSufficiency(registry.build("faithfulness", config.faithfulness.name, config,
                                             local_lm() if needs_lm else None), threshold=settings["threshold"])


SERVER_SETTINGS = (
    registry.Setting("base_url", str, None, "an OpenAI-compatible server instead of the local model"),
    registry.Setting("server_model", str, None, "the model to ask the server for (with base_url)"),
    registry.Setting("api_key_env", str, "OPENAI_API_KEY", "the environment variable holding the server's API key"),
)
label_rater.settings = (*SERVER_SETTINGS,
                        registry.Setting("prompt", str, "corrected", "corrected, or 003's verbatim prompt"),
                        registry.Setting("chunk_tokens", int, 1600, "tokens per context chunk"))
autorater.settings = (*SERVER_SETTINGS, registry.Setting("timestamp", str, None, "the queries' timestamp (unset: today)"))
nli_gold_rater.settings = (registry.Setting("threshold", float, NLI_GOLD_THRESHOLD,
                                            "sufficient = P >= this (003 appendix A: 0.05)"),)
