"""Fitting passages into the context (CausalLM.rag_prompt) in O(passages) tokenizer work:
the same prompt, warnings and errors as the one-passage-per-loop rule it replaced (kept
here as the reference), and tokenizer work that grows linearly with the passages."""
import copy
import random

import pytest

from franq.errors import ContextOverflowError
from franq.types import Passage


def reference_rag_prompt(lm, question, passages, *, reserve=0, on_overflow="truncate", instruction=None):
    """The rule as it was written before: re-render and re-tokenize the whole prompt after
    each passage is cut (quadratic in the number of passages)."""
    passages = list(passages)
    warnings = []
    while True:
        text = lm.render(question, passages, instruction=instruction)
        ids = lm.encode(text)
        excess = len(ids) + reserve - lm.max_context
        if excess <= 0:
            return text, tuple(ids), tuple(warnings)
        if on_overflow == "error":
            raise ContextOverflowError(f"passages: prompt ({len(ids)} tokens) plus answer ({reserve}) exceeds the "
                                       f"model context of {lm.max_context} tokens")
        idx = max((i for i, p in enumerate(passages) if p.text), default=None)
        if idx is None:
            closed = len(lm.encode(lm.render(question, None, instruction=instruction)))
            if closed + reserve <= lm.max_context:
                raise ContextOverflowError(
                    f"passages: the headers of the {len(passages)} passages (their numbers and titles) take "
                    f"{len(ids) - closed} tokens even with every passage text cut, which with the question "
                    f"and the answer ({closed} + {reserve} tokens) exceeds the model context of "
                    f"{lm.max_context} tokens; give fewer passages")
            raise ContextOverflowError(
                f"question/answer: {len(ids)} prompt tokens plus {reserve} answer tokens exceed "
                f"the model context of {lm.max_context} tokens even with no passage text")
        p_ids = lm.encode(passages[idx].text)
        keep = max(len(p_ids) - excess - 8, 0)
        new_text = lm.tokenizer.decode(p_ids[:keep]) if keep else ""
        warnings.append(f"passages[{idx}]: truncated from {len(p_ids)} to {keep} tokens to fit the "
                        f"model context of {lm.max_context} tokens")
        passages[idx] = Passage(new_text, passages[idx].title)


def with_context(lm, n):
    lm = copy.copy(lm)
    lm.max_context = n
    return lm


WORDS = "Paris is the capital of France . Lyon Zürich café 🙂 river 1889 tower built by Eiffel , and".split()


def passage(rng, n_words, title=True):
    text = " ".join(rng.choice(WORDS) for _ in range(n_words))
    return Passage(text, f"Title {rng.randint(0, 99)}" if title and rng.random() < 0.5 else "")


def cases():
    rng = random.Random(0)
    yield "fits", [Passage("Paris is in France.")], 0
    yield "two long passages", [Passage("Paris is the capital of France. " * 40), Passage("Lyon is a city. " * 40)], 10
    yield "tiny passages, some cut", [Passage(f"p{i} word") for i in range(60)], 8
    yield "tiny then one long", [Passage("x y") for _ in range(20)] + [Passage("long text " * 30)], 4
    for seed in range(6):
        rng = random.Random(seed)
        yield (f"mixed {seed}", [passage(rng, rng.choice([1, 2, 5, 20, 60]), title=True)
                                 for _ in range(rng.randint(5, 50))], rng.choice([0, 16]))


@pytest.mark.parametrize("kind", ["tiny_lm", "tiny_sp_lm"])
def test_same_prompt_warnings_and_errors_as_the_old_rule(request, kind):
    truncated = 0
    for context, (name, passages, reserve), on_overflow in (
            (c, case, o) for c in (160, 256, 400, 600) for case in cases() for o in ("truncate", "error")):
        lm = with_context(request.getfixturevalue(kind), context)
        try:
            want = reference_rag_prompt(lm, "Where is the tower?", passages, reserve=reserve, on_overflow=on_overflow)
        except ContextOverflowError as exc:
            with pytest.raises(ContextOverflowError) as got:
                lm.rag_prompt("Where is the tower?", passages, reserve=reserve, on_overflow=on_overflow)
            assert str(got.value) == str(exc), name
            continue
        got = lm.rag_prompt("Where is the tower?", passages, reserve=reserve, on_overflow=on_overflow)
        assert (got.text, got.ids, got.warnings) == want, (name, context)
        truncated += len(want[2]) > 1
    assert truncated >= 12  # cases where several passages were cut, each the same as before


class CountingTokenizer:
    """A tokenizer wrapper that counts calls and characters tokenized."""

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer
        self.calls = self.chars = 0

    def __call__(self, text, **kwargs):
        self.calls += 1
        self.chars += sum(map(len, text)) if isinstance(text, list) else len(text)
        return self._tokenizer(text, **kwargs)

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)


def tokenizer_work(lm, passages, reserve=0):
    lm = copy.copy(lm)
    lm.tokenizer = counter = CountingTokenizer(lm.tokenizer)
    try:
        lm.rag_prompt("Where?", passages, reserve=reserve)
    except ContextOverflowError as exc:
        assert "give fewer passages" in str(exc)
    return counter.calls, counter.chars


@pytest.mark.parametrize("n", [40])
def test_tokenizer_work_grows_linearly_with_the_passages(tiny_lm, n):
    lm = with_context(tiny_lm, 256)
    # many tiny passages: most must be cut, one at a time under the old rule
    small, large = ([Passage(f"w{i} x") for i in range(k)] for k in (n, 10 * n))
    calls_n, chars_n = tokenizer_work(lm, small)
    calls_10n, chars_10n = tokenizer_work(lm, large)
    assert calls_10n <= calls_n + 12  # O(log passages) whole-prompt tokenizations; the old rule: ~2 per passage
    assert chars_10n <= 40 * chars_n  # linear (times a log factor); the old rule: quadratic (~100x)
    # headers that cannot fit: the error comes after a constant number of calls
    titled = [Passage("x", f"A long title number {i}") for i in range(10 * n)]
    calls_err, _ = tokenizer_work(lm, titled)
    assert calls_err <= 4


def test_the_old_rule_did_quadratic_work(tiny_lm):
    """The counting above separates the two rules: the reference does ~10x the calls."""
    lm = with_context(tiny_lm, 256)
    lm.tokenizer = counter = CountingTokenizer(lm.tokenizer)
    with pytest.raises(ContextOverflowError):
        reference_rag_prompt(lm, "Where?", [Passage("x", f"A long title number {i}") for i in range(400)])
    assert counter.calls > 400


@pytest.mark.slow
def test_same_as_the_old_rule_with_the_embedded_chat_template():
    """The embedded SmolLM2 tokenizer and chat template (no model weights are loaded)."""
    from transformers import AutoTokenizer

    from franq.lm import CausalLM
    from franq.lm.load import dequantized_cache, embedded_gguf_path

    lm = CausalLM.__new__(CausalLM)
    lm.tokenizer = AutoTokenizer.from_pretrained(dequantized_cache(embedded_gguf_path()))
    truncated = 0
    for context in (300, 700, 1500):
        lm.max_context = context
        for name, passages, reserve in cases():
            try:
                want = reference_rag_prompt(lm, "Where is the tower?", passages, reserve=reserve)
            except ContextOverflowError as exc:
                with pytest.raises(ContextOverflowError, match="^" + __import__("re").escape(str(exc)) + "$"):
                    lm.rag_prompt("Where is the tower?", passages, reserve=reserve)
                continue
            got = lm.rag_prompt("Where is the tower?", passages, reserve=reserve)
            assert (got.text, got.ids, got.warnings) == want, (name, context)
            truncated += len(want[2]) > 1
    assert truncated >= 6
