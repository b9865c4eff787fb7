"""Option groups shared by the commands, declared once, and the helpers every command uses
to turn its options into a config, load a pipeline and report a failure in one line.

An option group is a list of ``click.option`` declarations. :func:`options` adds a group to
a command; :func:`grouped` adds one and hands the command a single object built from its
values (so ``franq score`` takes its batch settings as one :class:`BatchOptions`, not eight
parameters). Applications use these too: ``franq.cli.options`` is part of the extension
surface (docs/architecture.md).
"""
from __future__ import annotations

import functools
import logging
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import click

from franq.cli.numbers import AMOUNT, COUNT, COUNT_OR_ZERO, PROBABILITY, Number  # noqa: F401 (re-exported)
from franq.config import FranqConfig
from franq.config_checks import MODES
from franq.errors import redact
from franq.limits import LIMITS, use_limits

DEFAULTS = FranqConfig()
"""The config's defaults: help texts state these, read from here, so they cannot drift
(``tests/test_cli_help.py`` checks every option that states a default)."""


def choices_help(described: dict[str, str], default: str) -> str:
    """``'a' (what a is), 'b' (default: what b is), ...``: the config's default marked."""
    return ", ".join(f"'{k}' ({'default: ' if k == default else ''}{v})" for k, v in described.items())


MODE_OPTION = click.option(
    "--mode", type=click.Choice(MODES), default=None,
    help="Preset: long (claims, token probabilities), short (the answer is one claim, scored from samples), auto "
         "(a single short sentence is short), fast (the verifier alone, calibrated) or chat (both terms from a chat "
         f"model's P(True)); fast and chat load no causal LM. Default: the config's ({DEFAULTS.mode}).")
FAST_OPTION = click.option("--fast", is_flag=True, help="The fast preset (--mode fast): claims checked against the "
                           "passages by the verifier alone, with its own calibrator; no causal LM is loaded.")


def fast_mode(fast: bool, mode: str | None) -> str | None:
    """``--fast`` as ``--mode fast``; with another --mode, a one-line error naming both."""
    if fast and mode not in (None, "fast"):
        raise click.UsageError(f"--fast is --mode fast; it cannot go with --mode {mode}")
    return "fast" if fast else mode



def _limit_pairs(ctx, param, values) -> tuple[tuple[str, int], ...]:
    out = []
    for value in values:
        name, sep, number = value.partition("=")
        if not sep or name.strip() not in LIMITS:
            raise click.BadParameter(f"expected NAME=N with NAME one of {', '.join(LIMITS)}; got {value!r}")
        try:
            n = int(number.strip().replace("_", ""))
        except ValueError:
            n = 0
        if n < 1:
            raise click.BadParameter(f"{name.strip()}: expected a whole number >= 1, got {number!r}")
        out.append((name.strip(), n))
    return tuple(out)


LIMIT_OPTION = click.option(
    "--limit", "limits", multiple=True, metavar="NAME=N", callback=_limit_pairs,
    help="Raise (or lower) one of franq's limits for this run, e.g. --limit passages=2000 (repeat for "
         "more); over [limits] in the config. The table: docs/batch.md.")
"""``--limit NAME=N`` (repeatable): the command gets ``limits`` as ``((name, n), ...)``;
every command that scores or reads input takes it (:data:`MODEL_OPTIONS` has it)."""

THREADS_OPTION = click.option(
    "--threads", type=click.IntRange(min=1), default=None,
    help="Torch CPU threads. Default: the config's [model] threads (a fit recipe's count), else "
         "OMP_NUM_THREADS, else half the usable cores, 1 to 8 (1 on a 2-core machine).")
"""``--threads N``, the one definition every command uses; the value goes to
:func:`franq.lm.threads.configure_threads` (through ``[model] threads`` where there is a config)."""

MODEL_OPTIONS = [
    click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
                 help="TOML or JSON config file (sections: model, decomposer, faithfulness, uq, "
                      "calibration, batch; see docs/configuration.md and `franq config show`)."),
    click.option("--model", help="Causal LM: a local directory or a locally cached name (default: the "
                                 "embedded SmolLM2). Sets [model] path."),
    click.option("--gguf-file", help="A GGUF file inside --model, or a path to one."),
    click.option("--device", help="cpu, cuda, cuda:1, mps (default: cuda if available, else cpu)."),
    click.option("--dtype", type=click.Choice(["float32", "bfloat16", "float16", "auto"]), default=None,
                 help="Model weights' dtype (default: float32 on cpu, bfloat16 on a GPU)."),
    THREADS_OPTION,
    LIMIT_OPTION,
]
"""The options that choose the model (commands that only run its passes, like ``fit probe``)."""

STACK_OPTIONS = [
    *MODEL_OPTIONS,
    click.option("--faithfulness", help="Faithfulness backend: combined, lexical, context_pmi, alignscore, nli, "
                                        "judge, lookback, hidden_probe, verifier, minicheck, hhem, factcg, or a "
                                        "plugin's name "
                                        f"(default: {DEFAULTS.faithfulness.name})."),
    click.option("--calibrator", help=choices_help(
        {"default": "the shipped calibrator fitted for this stack, if any", "none": "raw values only"},
        DEFAULTS.calibration.calibrator) + ", or a file from `franq fit calibrator`; several separated by commas "
        "(mine.json,default): each preset uses the first fitted for its stack."),
    MODE_OPTION,
    click.option("--prompts", type=click.Choice(["franq", "paper"]), default=None,
                 help="Prompt wording (sets [prompts] style): " + choices_help(
                     {"franq": "franq's own", "paper": "the papers' verbatim: FRANQ fig. 3-6, the answering "
                      "checks' 000 / 003 prompts"}, DEFAULTS.prompts.style) + "."),
]
"""The common choices of a scoring stack, as flags over the config file."""

DECOMPOSER_OPTIONS = [
    click.option("--decomposer", default=None,
                 help="Claims: " + choices_help(
                     {"atomic": "offline dependency parse", "sentence": "offline splitter",
                      "llm": "atomic claims from a chat model: the scoring model, or a server with "
                             "--decomposer-base-url"}, DEFAULTS.decomposer.name) + ", or a plugin's name."),
    click.option("--decomposer-model", help="LLM decomposer: server model name, or local model path."),
    click.option("--decomposer-base-url", help="LLM decomposer: OpenAI-compatible server URL, e.g. "
                                               "http://localhost:8000/v1 (API key from $OPENAI_API_KEY)."),
]

CALIBRATOR_MISMATCH_OPTION = click.option(
    "--calibrator-mismatch", type=click.Choice(["warn", "error", "force"]), default=None,
    help="If the calibrator was fitted for another stack: " + choices_help(
        {"warn": "skip it, with a warning", "error": "stop", "force": "apply it anyway"},
        DEFAULTS.calibration.on_mismatch) + ".")


def decomposer_flags(decomposer=None, decomposer_model=None, decomposer_base_url=None) -> dict[str, str | None]:
    """:data:`DECOMPOSER_OPTIONS` as :data:`FLAG_KEYS` flags: a server URL means the openai backend."""
    return {"decomposer": decomposer, "decomposer_model": decomposer_model,
            "decomposer_base_url": decomposer_base_url,
            "decomposer_backend": "openai" if decomposer_base_url else None}


THRESHOLD_OPTION = click.option(
    "--threshold", type=PROBABILITY, default=None,
    help="Add a verdict to each scored claim: likely_true if P(true) >= T, else likely_false.")

PRIOR_OPTION = click.option(
    "--prior", type=Number(0.0, 1.0, low_open=True, high_open=True), default=None,
    help="The share of true claims where you use franq, if you know it: the calibrator's P(true) is moved "
         "there (label shift), as `franq fit prior --prior` moves a file, and the results record it.")

RAW_CSV_OPTION = click.option(
    "--raw-csv", is_flag=True,
    help="Write CSV cells exactly as given. By default a text cell that starts with = + - @, a tab or a "
         "carriage return gets a ' in front, so a spreadsheet shows it as text, not a formula.")

FLAG_KEYS = {
    "model": "model.path", "gguf_file": "model.gguf_file", "device": "model.device", "dtype": "model.dtype",
    "threads": "model.threads", "faithfulness": "faithfulness.name", "calibrator": "calibration.calibrator",
    "calibrator_mismatch": "calibration.on_mismatch", "mode": "mode", "decomposer": "decomposer.name",
    "decomposer_model": "decomposer.model", "decomposer_base_url": "decomposer.base_url",
    "decomposer_backend": "decomposer.backend", "threshold": "calibration.threshold", "prompts": "prompts.style",
    "prior": "calibration.prior",
}
"""Command-line flag -> the config key it sets."""


def options(group: Sequence[Callable]) -> Callable:
    """A decorator adding every option of ``group`` to a command, in order."""
    def add(f):
        for option in reversed(group):
            f = option(f)
        return f
    return add


def grouped(name: str, group: Sequence[Callable], build: Callable[..., object]) -> Callable:
    """Add ``group``'s options to a command and pass the command one keyword ``name``:
    ``build(**values of those options)``."""
    def add(f):
        params = []

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            mine = {p: kwargs.pop(p) for p in params}
            return f(*args, **{name: build(**mine)}, **kwargs)

        decorated = options(group)(wrapper)
        params.extend(p.name for p in decorated.__click_params__[-len(group):])
        return decorated
    return add


@dataclass(frozen=True)
class StackFlags:
    """The flags of :data:`STACK_OPTIONS` (plus any of :data:`FLAG_KEYS`) as given."""

    config_path: str | None = None
    model: str | None = None
    gguf_file: str | None = None
    device: str | None = None
    dtype: str | None = None
    threads: int | None = None
    faithfulness: str | None = None
    calibrator: str | None = None
    mode: str | None = None
    prompts: str | None = None
    limits: tuple[tuple[str, int], ...] = ()
    """``--limit NAME=N`` pairs."""

    def config(self, **more) -> FranqConfig:
        """The config file (or the defaults) with the flags given on top; ``more`` are
        further flags (:data:`FLAG_KEYS`) or overrides of these."""
        flags = {k: v for k, v in vars(self).items() if k not in ("config_path", "limits")}
        return config_from_flags(self.config_path, limits=self.limits, **{**flags, **more})


def stack_files(flags: StackFlags | None = None, cfg: FranqConfig | None = None) -> dict[str, str | None]:
    """The files a stack reads, by the option or config key that names them: what every
    output of a command must differ from (:func:`franq.files.check_outputs`)."""
    from franq.calibrate import calibrator_entries

    files: dict[str, str | None] = {}
    if flags is not None:
        files.update({"--config": flags.config_path, "--gguf-file": flags.gguf_file, "--calibrator": flags.calibrator})
    if cfg is not None:
        files.update({"calibration.calibrator": cfg.calibration.calibrator, "model.probe_file": cfg.model.probe_file,
                      "model.gguf_file": cfg.model.gguf_file})
    for role in ("--calibrator", "calibration.calibrator"):  # one file, or several separated by commas
        entries = calibrator_entries(files.pop(role, None))
        files.update({role if len(entries) == 1 else f"{role} ({i + 1})": e for i, e in enumerate(entries)})
    return {role: p for role, p in files.items() if p not in (None, "default", "none")}


def stack(f):
    """:data:`STACK_OPTIONS`, passed to the command as one ``stack: StackFlags``."""
    return grouped("stack", STACK_OPTIONS, StackFlags)(f)


def model_stack(f):
    """:data:`MODEL_OPTIONS`, passed to the command as one ``stack: StackFlags``."""
    return grouped("stack", MODEL_OPTIONS, StackFlags)(f)


def config_from_flags(config_path: str | None = None, *, limits=(), **flags) -> FranqConfig:
    """The config file (or the defaults) with the flags that were given on top; ``limits``:
    ``--limit`` pairs over the config's ``[limits]``."""
    cfg = FranqConfig.from_file(config_path) if config_path else FranqConfig()
    unknown = set(flags) - set(FLAG_KEYS)
    if unknown:
        raise TypeError(f"config_from_flags: unknown flags {sorted(unknown)}")
    cfg = cfg.with_overrides({**{FLAG_KEYS[k]: v for k, v in flags.items()},
                              **{f"limits.{name}": n for name, n in limits}})
    use_limits(cfg.limits)  # the artefacts this command reads obey [limits] / --limit too
    return cfg


def load_pipeline(cfg: FranqConfig):
    from franq.pipeline import Franq

    return Franq.from_config(cfg)


_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text) -> str:
    """``text`` safe for a terminal, secrets masked: control characters (escape sequences,
    carriage returns, newlines, bidirectional overrides) shown as ``\\x1b``-style escapes."""
    return _CONTROL_RE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), redact(str(text)))


def fail(exc: BaseException) -> click.ClickException:
    """A franq error as the CLI's one-line error (secrets masked, control characters escaped)."""
    return click.ClickException(printable(exc))


class RedactingFilter(logging.Filter):
    """Every log line franq prints goes through :func:`printable`."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = printable(record.getMessage()), None
        return True


def interactive() -> bool:
    return sys.stderr.isatty()


PROGRESS_OPTION = click.option(
    "--progress", "progress_lines", is_flag=True,
    help="Show one answer's stages on stderr even when it is not a terminal, one line each (a terminal shows "
         "them unless --quiet).")


class StageProgress:
    """The progress of one answer on stderr: loading the model, then each stage of the
    pipeline as it starts (:attr:`franq.Franq.on_stage`, :data:`franq.pipeline.STAGES`),
    which together take tens of seconds to minutes on a CPU for a long answer with many
    passages. On a terminal, a bar whose elapsed time ticks every half second; with
    ``lines`` (``--progress`` off a terminal, e.g. into a log), one line per stage with
    the seconds elapsed. The pipeline only tells it a stage's name: nothing waits on it.
    ``-v`` logs inside the stages."""

    TICK_SECONDS = 0.5

    def __init__(self, enabled: bool, desc: str, *, lines: bool = False):
        self.enabled = enabled
        self.desc = desc
        self.lines = lines
        self.bar = None
        self._done = None
        self._pipeline = None
        self._start = time.perf_counter()

    def __enter__(self):
        if self.enabled and self.lines:
            self._say("loading the model")
        elif self.enabled:
            import threading

            from tqdm import tqdm

            self.bar = tqdm(total=None, desc=f"{self.desc}: loading the model", file=sys.stderr, leave=False,
                            bar_format="{desc} [{elapsed}]")
            self._done = threading.Event()
            threading.Thread(target=self._tick, daemon=True).start()
        return self

    def _tick(self) -> None:
        while not self._done.wait(self.TICK_SECONDS):
            self.bar.refresh()

    def _say(self, what: str) -> None:
        click.echo(f"{self.desc}: {what} ({time.perf_counter() - self._start:.1f} s)", err=True)

    def __call__(self) -> None:
        """The model is loaded: scoring starts."""
        self.stage("scoring")

    def attach(self, pipeline) -> None:
        """Show ``pipeline``'s stages (until this progress ends)."""
        if self.enabled:
            self._pipeline = pipeline
            pipeline.on_stage = self.stage

    def stage(self, name: str) -> None:
        from franq.pipeline import STAGES

        if self.bar is not None:
            self.bar.set_description_str(f"{self.desc}: {STAGES.get(name, name)}")
        elif self.enabled and self.lines:
            self._say(STAGES.get(name, name))

    def __exit__(self, *exc) -> None:
        if self._pipeline is not None:
            self._pipeline.on_stage = None
        if self.bar is not None:
            self._done.set()
            self.bar.close()
        elif self.enabled and self.lines and exc[0] is None:
            self._say("done")


def _verbose_callback(ctx, param, value) -> None:
    if value:
        logging.getLogger().setLevel(logging.INFO)
