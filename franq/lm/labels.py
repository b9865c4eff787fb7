"""P(first word) between two answer words, read from next-token log-probabilities.

A prompt that asks for one of two words (yes / no, True / False, 1 / 0, sufficient /
insufficient, correct / incorrect) is scored by the model's next-token distribution:

    P(first) = p(first) / (p(first) + p(second))

where ``p(word)`` sums the probabilities of the first tokens of the word's spellings
(``"yes"``, ``"Yes"``, and with ``leading_space`` also ``" yes"``, ...). The two-way
normalization makes it a probability for calibration metrics; its ranking equals
``log p(first) - log p(second)``.

:class:`LabelWords` finds the first tokens once per tokenizer; :func:`label_probability`
runs the prompts; :func:`pair_probability` is the formula on two log-probabilities (for
log-probabilities read elsewhere, e.g. cached by the benchmark);
:func:`top_logprobs_probability` reads a server's ``top_logprobs``. This module needs no
torch.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from franq.errors import FranqError, LabelWordsError, UpstreamTimeout


def pair_probability(log_first, log_second):
    """``p(first) / (p(first) + p(second))`` from the two log-probabilities (scalars or
    arrays); 0.5 where the model put no mass on either."""
    a = np.asarray(log_first, dtype=np.float64)
    b = np.asarray(log_second, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        p = 1.0 / (1.0 + np.exp(b - a))
    return np.where(np.isneginf(a) & np.isneginf(b), 0.5, p)[()]


@dataclass(frozen=True)
class LabelWords:
    """Two answer words, each as spellings, and the first token ids that stand for each.

    Build with :meth:`lookup`; ``candidates`` (first word's ids, then the second's) are
    the tokens to read from a next-token distribution.
    """

    first: tuple[str, ...]
    second: tuple[str, ...]
    first_ids: tuple[int, ...]
    second_ids: tuple[int, ...]

    @classmethod
    def lookup(cls, lm, first: str | Sequence[str], second: str | Sequence[str], *,
               leading_space: bool = False) -> LabelWords:
        """The first token of each spelling of ``first`` and ``second`` in ``lm``'s
        tokenizer (with ``leading_space``, also of each spelling after a space).

        A spelling's first token is its first token that decodes to visible text (a
        SentencePiece word-boundary piece is skipped); a spelling whose first such token
        is the unknown token is left out. Raises :class:`~franq.errors.LabelWordsError`
        when a word has no usable spelling or the two words share a first token.
        """
        first = (first,) if isinstance(first, str) else tuple(first)
        second = (second,) if isinstance(second, str) else tuple(second)
        first_ids, second_ids = (_first_tokens(lm, w, leading_space) for w in (first, second))
        for words, ids in ((first, first_ids), (second, second_ids)):
            if not ids:
                raise LabelWordsError(f"label word {_spelled(words)}: no spelling starts with a known token "
                                      f"in the tokenizer of {lm.name}")
        shared = sorted(set(first_ids) & set(second_ids))
        if shared:
            pieces = ", ".join(f"{lm.tokenizer.decode([t])!r} (id {t})" for t in shared)
            raise LabelWordsError(f"label words {_spelled(first)} and {_spelled(second)} start with the same "
                                  f"token {pieces} in the tokenizer of {lm.name}: the next token cannot tell "
                                  "them apart")
        return cls(first, second, first_ids, second_ids)

    @property
    def candidates(self) -> tuple[int, ...]:
        return self.first_ids + self.second_ids

    def probability(self, logprobs) -> np.ndarray:
        """P(first) for each row of next-token log-probabilities over :attr:`candidates`."""
        lp = np.asarray(logprobs, dtype=np.float64)
        k = len(self.first_ids)
        return pair_probability(np.logaddexp.reduce(lp[:, :k], axis=1), np.logaddexp.reduce(lp[:, k:], axis=1))


def label_probability(lm, prompts: Sequence[Sequence[int]], words: LabelWords, *,
                      max_batch_tokens: int = 4096) -> np.ndarray:
    """P(first word) as the next token after each prompt (token ids), shape ``(len(prompts),)``."""
    lp = lm.next_token_logprobs(prompts, words.candidates, max_batch_tokens=max_batch_tokens)
    return words.probability(lp)


def top_logprobs_probability(top: Sequence[tuple[str, float]], first: Sequence[str], second: Sequence[str]) -> float:
    """P(first) from one position's top alternatives ``(token, logprob)``, as an
    OpenAI-compatible server returns them (``top_logprobs``): a token counts for a word
    when, stripped and lower-cased, it equals one of the word's spellings (lower-cased)."""
    a, b = ({w.lower() for w in words} for words in (first, second))
    top = [(token.strip().lower(), lp) for token, lp in top]
    return float(pair_probability(np.logaddexp.reduce([lp for t, lp in top if t in a], initial=-np.inf),
                                  np.logaddexp.reduce([lp for t, lp in top if t in b], initial=-np.inf)))


def server_label_probability(client, model: str, messages: list[dict[str, str]], first: Sequence[str],
                             second: Sequence[str], *, top_logprobs: int, where: str, usage=None) -> float:
    """P(first) for one chat prompt on an OpenAI-compatible server: one token at
    temperature 0 with ``top_logprobs``, read by :func:`top_logprobs_probability`. A failed
    request, or a server that returns no log-probabilities, is a :class:`FranqError`
    starting with ``where`` (who asked: a model name, the config keys); one that fails for
    every request alike (:func:`request_error`) stops a batch run. ``usage``: a callable
    given the reply's ``usage`` (token counts), when the server sends one."""
    try:
        resp = client.chat.completions.create(model=model, messages=messages, max_tokens=1, temperature=0,
                                              logprobs=True, top_logprobs=top_logprobs)
    except Exception as exc:  # noqa: BLE001 - any client/server failure gets the same context
        raise request_error(exc, where) from exc
    if usage is not None and getattr(resp, "usage", None) is not None:
        usage(resp.usage)
    logprobs = getattr(resp.choices[0], "logprobs", None) if resp.choices else None
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        raise FranqError(f"{where}: the server returned no log-probabilities (it must support "
                         "logprobs/top_logprobs)")
    return top_logprobs_probability([(alt.token, alt.logprob) for alt in content[0].top_logprobs or []],
                                    first, second)


def request_error(exc: BaseException, where: str) -> FranqError:
    """A failed chat request as franq reports it. The server refused this request (400, 422:
    e.g. a prompt over its context) or did not answer it within the client's timeout (a long
    prompt on a slow server: stopping would stop every rerun at the same record): a
    :class:`FranqError`, so a batch reports the record and carries on. It cannot be reached, or
    refuses every request alike (a wrong key or model name, 429 or 5xx after the client's
    retries): a :class:`~franq.lm.served.client.ServerUnavailable`, which stops a batch run
    instead of reporting every remaining record bad; what was written stays and the same
    command resumes."""
    import openai

    from franq.lm.served.client import ServerUnavailable

    text = f"{where}: request failed: {exc}"
    if isinstance(exc, openai.APITimeoutError):
        return UpstreamTimeout(f"{text} (no reply within the scorer's timeout; raise its 'timeout' for long prompts)")
    if isinstance(exc, (openai.BadRequestError, openai.UnprocessableEntityError)) or not isinstance(
            exc, (openai.APIConnectionError, openai.APIStatusError)):
        return FranqError(text)
    return ServerUnavailable(f"{text} (every request fails alike: a batch run stops here, keeps what it wrote, "
                             "and the same command resumes)")


def _spelled(words: tuple[str, ...]) -> str:
    return "/".join(repr(w) for w in words)


def _first_tokens(lm, spellings: tuple[str, ...], leading_space: bool) -> tuple[int, ...]:
    texts = list(spellings) + ([" " + s for s in spellings] if leading_space else [])
    unk = lm.tokenizer.unk_token_id
    ids = set()
    for text in texts:
        first = next((t for t in lm.encode(text) if lm.tokenizer.decode([t]).strip()), None)
        if first is not None and first != unk:
            ids.add(first)
    return tuple(sorted(ids))
