"""The contract of one engine adapter: how to ask a server for teacher-forced prompt
log-probabilities and for sampled answers, and how to read its replies.

An adapter builds :class:`~franq.lm.served.client.Request` objects and reads their JSON
replies; it never sends anything itself. Token ids are franq's local tokenizer's; an
engine that takes text (TGI, llama-cpp-python) gets the same tokens decoded, and the
adapter checks that the server's tokens of the answer are the local ones, so token
positions (and so claims' character offsets) stay exact.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from franq.lm.served.client import Request, ServedModelError

class BadNumber(ServedModelError):
    """A reply holds a number that cannot be a log-probability (NaN, an infinity, > 0): the
    server is broken, not lacking a feature (the start-up probe says so instead of
    marking the feature off)."""


TOLERANCE = 1e-4
"""How far above 0 a log-probability may be and still be read as rounding (it is read as 0)."""


@dataclass(frozen=True)
class ScoreItem:
    """One teacher-forced pass: prompt + answer tokens, and the same as text."""

    prompt_ids: tuple[int, ...]
    answer_ids: tuple[int, ...]
    prompt_text: str
    answer_text: str

    @property
    def ids(self) -> list[int]:
        return [*self.prompt_ids, *self.answer_ids]


@dataclass(frozen=True)
class SampleParams:
    n: int
    temperature: float
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int = 16
    seed: int | None = 0


@dataclass(frozen=True)
class Draw:
    """One generated answer as the server returned it: the raw text, each token's text and
    log-probability, the token ids where the engine returns them, and why it stopped."""

    text: str
    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    ids: tuple[int, ...] | None
    finish: str  # "eos" or "length"


class Engine:
    name = "engine"
    prompt_param = ""
    """The request parameter that returns prompt log-probabilities (named when it is missing)."""
    n_per_request = True
    """Whether one request returns ``n`` samples (else one request per sample)."""

    def __init__(self, model: str | None = None):
        self.model = model

    def setup(self, client, tokenizer) -> None:
        """Learn, at start-up, what the adapter needs to know of this server (the probe calls it)."""

    def score_request(self, item: ScoreItem) -> Request:
        raise NotImplementedError

    def read_score(self, body, item: ScoreItem) -> list[float]:
        raise NotImplementedError

    def sample_requests(self, prompt_ids: Sequence[int], prompt_text: str, p: SampleParams) -> list[Request]:
        raise NotImplementedError

    def read_samples(self, bodies: list) -> list[Draw]:
        raise NotImplementedError

    def _model(self) -> dict:
        return {"model": self.model} if self.model else {}

    def fail(self, what, detail: str | None = None) -> ServedModelError:
        """The error naming this engine: ``fail("why")`` or ``fail(ErrorClass, "why")``."""
        kind, what = (what, detail) if detail is not None else (ServedModelError, what)
        return kind(f"model.engine {self.name}: {what}")


def field(body, *path, engine: Engine):
    """``body[path[0]][path[1]]...``, or an error naming the engine and the missing field."""
    cur = body
    for k in path:
        try:
            cur = cur[k]
        except (KeyError, IndexError, TypeError):
            shown = ".".join(str(p) for p in path)
            raise engine.fail(f"the reply has no '{shown}' (a server of another kind, or too old?)") from None
    return cur


def tail(values: list, n: int, engine: Engine, what: str) -> list:
    values = as_list(values, engine, what)
    if len(values) < n:
        raise engine.fail(f"{what}: {len(values)} entries for {n} answer tokens")
    return values[len(values) - n:] if n else []


def check_ids(got: Sequence[int], item: ScoreItem, engine: Engine) -> None:
    if list(got) != list(item.answer_ids):
        raise engine.fail(f"the server's tokens of the answer {list(got)[:8]}... differ from the local tokenizer's "
                          f"{list(item.answer_ids)[:8]}...; set [model] tokenizer to the served model's tokenizer")


def logprob(value, engine: Engine, where: str) -> float:
    """A log-probability from a reply: a finite number <= 0 (up to :data:`TOLERANCE` above 0,
    read as 0). NaN, infinities and positive values would make every claim certain or crash a
    later stage: they are refused, naming the engine, the field and its position."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise engine.fail(f"{where}: expected a log-probability, got {str(value)[:60]!r}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf if value > 0 else -math.inf
    if not math.isfinite(number):
        raise engine.fail(BadNumber, f"{where}: the server sent {number} where a log-probability (a finite number <= 0) "
                          f"belongs; refused rather than scored")
    if number > TOLERANCE:
        raise engine.fail(BadNumber, f"{where}: the server sent {number:g}, not a log-probability (a probability above 1); "
                          f"refused rather than scored")
    return min(number, 0.0)


def logprobs(values, engine: Engine, where: str) -> list[float]:
    """A list of log-probabilities, each checked by :func:`logprob` and named by its index."""
    return [logprob(x, engine, f"{where}[{t}]") for t, x in enumerate(as_list(values, engine, where))]


KINDS = {list: "a list", dict: "an object", str: "text"}


def typed(value, kind: type, engine: Engine, where: str):
    """``value`` when it is a ``kind`` (list, dict, str); else a one-line error naming ``where``."""
    if not isinstance(value, kind):
        raise engine.fail(f"{where}: expected {KINDS[kind]}, got {type(value).__name__}")
    return value


def as_list(value, engine: Engine, where: str) -> list:
    return typed(value, list, engine, where)


def as_dict(value, engine: Engine, where: str) -> dict:
    return typed(value, dict, engine, where)


def token_id(value, engine: Engine, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise engine.fail(f"{where}: expected a token id (a whole number >= 0), got {str(value)[:60]!r}")
    return value


def text(value, engine: Engine, where: str) -> str:
    return typed(value, str, engine, where)


def finish(reason) -> str:
    reason = reason.get("type") if isinstance(reason, dict) else reason
    return "length" if reason in ("length", "max_tokens") else "eos"
