"""One table of limits, shared by the CLI, the batch runner and the service.

Every input franq accepts is bounded before any work starts: a record with a million
passages, a 200 MB ``.json``, ``threads = 1000000`` or ``n_samples = 1e9`` end in one
line that names the limit, the value seen and the option that raises it, never in a
MemoryError, a segfault or an hour of tokenizing.

    >>> from franq.limits import LIMITS, check
    >>> check("passages", 3000, where="line 7")
    Traceback (most recent call last):
    ...
    franq.limits.LimitError: line 7: 3000 passages, over the limit of 1000 (passages per answer; raise it with [limits] passages = N or --limit passages=N)

A limit is raised (or lowered) per run with ``[limits] NAME = N`` in the config file or
``--limit NAME=N`` on the command line; :func:`resolve` merges those over the defaults and
:class:`Limits` (``FranqConfig.limits``) holds the result. Where they are checked:
:func:`check_settings` when a config is built (threads, samples, tokens: before any model
loads), :func:`check_example` / :func:`check_inputs` when a record, request or API call is
read (:func:`franq.io.parse_example`, ``Franq.score_many``, ``Franq.answer``).
docs/batch.md lists the table (:func:`markdown_table`).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from franq.errors import InputError


@dataclass(frozen=True)
class Limit:
    name: str
    default: int
    unit: str
    """What is counted, as the error message says it ("passages", "characters", "bytes")."""
    what: str
    """One line for docs/batch.md and ``--help``."""


_TABLE = (
    # per example (batch line, service request, franq.score call)
    Limit("passages", 1_000, "passages", "passages per answer"),
    Limit("passage_chars", 100_000, "characters", "characters per passage (title and text)"),
    Limit("context_chars", 2_000_000, "characters", "characters of all passages of one answer together"),
    Limit("answer_chars", 100_000, "characters", "characters per answer"),
    Limit("question_chars", 20_000, "characters", "characters per question"),
    Limit("claims", 1_000, "claims", "claims per answer (given or decomposed)"),
    Limit("claim_chars", 10_000, "characters", "characters per claim"),
    # settings
    Limit("samples", 100, "samples", "sampled answers per question (uq.n_samples)"),
    Limit("threads", 256, "threads", "CPU threads (model.threads, --threads)"),
    Limit("max_new_tokens", 8_192, "tokens", "tokens generated per answer or sample"),
    Limit("in_flight", 256, "requests", "requests in flight to a served model"),
    Limit("retries", 10, "retries", "retries of one request to a served model (model.max_retries)"),
    Limit("retry_wait_seconds", 60, "seconds", "longest wait before a retry to a served model (backoff, Retry-After)"),
    # files franq reads
    Limit("record_bytes", 16 * 2**20, "bytes", "bytes per JSONL line (batch, report, trust, sufficiency, selective)"),
    Limit("json_file_bytes", 64 * 2**20, "bytes", "bytes of a whole .json input (one example or a list)"),
    Limit("artefact_bytes", 64 * 2**20, "bytes", "bytes of a calibrator, probe, faithfulness map, policy or verifier card"),
    Limit("config_bytes", 2**20, "bytes", "bytes of a config file (TOML or JSON)"),
    Limit("decompressed_bytes", 2 * 2**30, "bytes", "bytes read from one gzip file after decompression"),
    Limit("reply_bytes", 64 * 2**20, "bytes", "bytes of one reply of a served model, before and after decompression"),
    Limit("json_depth", 64, "levels", "nesting depth of any JSON or TOML value franq reads"),
    # the service
    Limit("body_bytes", 2 * 2**20, "bytes", "bytes per HTTP request body (franq serve)"),
    Limit("examples_per_request", 64, "examples", "examples per /score_many request (franq serve)"),
    Limit("render_spans", 10_000, "spans", "char_spans per /render request (franq serve)"),
)
LIMITS: dict[str, Limit] = {limit.name: limit for limit in _TABLE}
"""Every limit by name, in the order of the table."""


class LimitError(InputError):
    """An input or setting is over one of franq's limits; the message names the limit and
    how to raise it."""


def _as_count(name: str, value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{where}limit {name!r} must be a whole number >= 1, got {value!r}")
    return value


def resolve(overrides: Mapping[str, Any] | None = None, *, where: str = "[limits]") -> dict[str, int]:
    """The limits in force: the defaults with ``overrides`` (``[limits]`` table, ``--limit``)
    applied; an unknown name or a value that is not a positive integer is refused."""
    values = {name: limit.default for name, limit in LIMITS.items()}
    for name, value in (overrides or {}).items():
        if name not in LIMITS:
            raise InputError(f"{where}: unknown limit {name!r}; known: {', '.join(LIMITS)}")
        values[name] = _as_count(name, value, f"{where}: ")
    return values


_IN_FORCE: dict[str, int] = {}  # the limits of this run (:func:`use_limits`), for reads given none


def use_limits(limits: Mapping[str, int] | None) -> None:
    """Make ``limits`` (``[limits]`` with ``--limit`` on top) the ones reads given none obey."""
    _IN_FORCE.clear()
    _IN_FORCE.update(limits or {})


def limit_of(name: str, limits: Mapping[str, int] | None = None) -> int:
    """Limit ``name``: from ``limits``, else those in force (:func:`use_limits`), else the default."""
    return int((limits or _IN_FORCE).get(name, LIMITS[name].default))


def message(name: str, value: int, *, where: str = "", limit: int | None = None, subject: str = "") -> str:
    """The one-line error for ``value`` over limit ``name``: ``"line 3: 'passages[0]' is
    800 characters, over the limit of 500 (...; raise it with ...)"`` (``where``: ``line 3``;
    ``subject``: ``'passages[0]'``, optional)."""
    spec = LIMITS[name]
    bound = spec.default if limit is None else limit
    prefix = f"{where}: " if where else ""
    verb = "is" if spec.unit in ("characters", "bytes", "tokens", "levels", "seconds") else "has"
    amount = f"{subject} {verb} {value} {spec.unit}" if subject else f"{value} {spec.unit}"
    return (f"{prefix}{amount}, over the limit of {bound} ({spec.what}; "
            f"raise it with [limits] {name} = N or --limit {name}=N)")


def check(name: str, value: int, *, where: str = "", limits: Mapping[str, int] | None = None,
          subject: str = "") -> int:
    """``value`` itself when it is within limit ``name`` (from ``limits``, else the default);
    otherwise :class:`LimitError` with :func:`message`."""
    bound = (limits or {}).get(name, LIMITS[name].default)
    if value > bound:
        raise LimitError(message(name, value, where=where, limit=bound, subject=subject))
    return value


@dataclass(frozen=True)
class Limits(Mapping):
    """The limits in force, as a mapping ``name -> int``: the defaults with the overrides a
    config's ``[limits]`` table and ``--limit NAME=N`` gave (kept in :attr:`overrides`).
    Frozen and hashable like the rest of :class:`~franq.config.FranqConfig`, whose
    ``limits`` it is."""

    overrides: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, table: Any = None, *, where: str = "[limits]") -> Limits:
        """``table`` (``{"passages": 2000}``) checked: known names, whole numbers >= 1."""
        if isinstance(table, Limits):
            return table
        if table is not None and not isinstance(table, Mapping):
            raise InputError(f"{where}: expected a table of NAME = N, got {type(table).__name__}")
        resolve(table, where=where)
        given = dict(table or {})
        return cls(tuple((name, given[name]) for name in LIMITS if name in given))

    def __getitem__(self, name: str) -> int:
        for key, value in self.overrides:
            if key == name:
                return value
        return LIMITS[name].default

    def __iter__(self) -> Iterator[str]:
        return iter(LIMITS)

    def __len__(self) -> int:
        return len(LIMITS)

    def check(self, name: str, value: int, *, where: str = "") -> int:
        """:func:`check` against these limits."""
        return check(name, value, where=where, limits=self)


SETTINGS = (("model.threads", "threads"), ("uq.n_samples", "samples"), ("model.max_new_tokens", "max_new_tokens"),
            ("uq.max_sample_tokens", "max_new_tokens"), ("decomposer.max_tokens", "max_new_tokens"))
"""The config settings each bounded by a limit: ``(section.key, limit name)``."""


def check_settings(config) -> None:
    """The settings of :data:`SETTINGS` in ``config`` (a :class:`~franq.config.FranqConfig`)
    within ``config.limits``: checked when the config is built, before any model loads."""
    for key, name in SETTINGS:
        section, field = key.split(".")
        value = getattr(getattr(config, section), field)
        if isinstance(value, int) and not isinstance(value, bool):
            check(name, value, where="config", subject=f"'{key}'", limits=config.limits)


def check_inputs(question: str | None, passages: Sequence, *, limits: Mapping[str, int] | None = None,
                 where: str = "") -> None:
    """A question and its passages (objects with ``text`` and ``title``) within ``limits``:
    how many passages, characters per passage and of them all, characters of the question."""
    if question is not None:
        check("question_chars", len(question), where=where, subject="'question'", limits=limits)
    check("passages", len(passages), where=where, subject="'passages'", limits=limits)
    total = 0
    for i, p in enumerate(passages):
        n = len(p.text) + len(p.title or "")
        check("passage_chars", n, where=where, subject=f"'passages[{i}]'", limits=limits)
        total += n
    check("context_chars", total, where=where, subject="'passages' together", limits=limits)


def check_example(example, *, limits: Mapping[str, int] | None = None, where: str = "", claims: bool = True):
    """``example`` (a :class:`~franq.io.Example`) within ``limits``: its question, passages,
    answer and given claims (:func:`check_inputs`, ``answer_chars``, ``claims``,
    ``claim_chars``; ``claims=False``: they were checked as they were read,
    :func:`franq.io.parse_claims`). Returns ``example``."""
    check_inputs(example.question, example.passages, limits=limits, where=where)
    check("answer_chars", len(example.answer), where=where, subject="'answer'", limits=limits)
    if claims and example.claims is not None:
        check("claims", len(example.claims), where=where, subject="'claims'", limits=limits)
        for i, claim in enumerate(example.claims):
            check("claim_chars", len(claim), where=where, subject=f"'claims[{i}]'", limits=limits)
    return example


EXAMPLE_SUBJECTS = {"passages": "'passages'", "passage_chars": "'passages[0]'", "context_chars": "'passages' together",
                    "answer_chars": "'answer'", "question_chars": "'question'", "claims": "'claims'",
                    "claim_chars": "'claims[0]'", "samples": "'uq.n_samples'", "threads": "'model.threads'",
                    "max_new_tokens": "'model.max_new_tokens'", "record_bytes": "record"}
"""What the error names for each limit, as docs/batch.md shows it (the field, setting or record)."""


def markdown_table() -> str:
    """The table of limits as docs/batch.md shows it (a test keeps the two the same): each
    limit, its default, what it bounds, the start of its one-line error and how to raise it."""
    rows = ["| limit | default | what it bounds | error (after the file, line or request) | raise it with |",
            "|---|---:|---|---|---|"]
    for x in _TABLE:
        error = message(x.name, x.default + 1, subject=EXAMPLE_SUBJECTS.get(x.name, "")).split(" (", 1)[0]
        rows.append(f"| `{x.name}` | {x.default:,} {x.unit} | {x.what} | {error} | "
                    f"`[limits] {x.name} = N`, `--limit {x.name}=N` |")
    return "\n".join(rows)
