"""Methods of papers 000 and 003 that a reproducer looks for, beside franq's answer checks
(:mod:`franq.apps.answering.verify`). Every score is "higher = more likely faithful /
correct".

    IntrinsicAbstentionCheck  000 4.1: the generator's own refusal is v (1 = it answered)
    PromptNLIBackend             000 A.3: the generating model as the NLI model, p("1")
    dual_perplexity_scores       000 4.1 / Wu et al. 2024: Dual Generation's perplexity
                                 difference, percentiles, and the answer it picks
    SampledPTrueCheck         003 5.1: P(True) from 20 sampled answers x 5 sampled judgements
                                 (Kadavath et al. 2022)

The XGBoost 3-fold combiner of 000 E.3 is :class:`~franq.apps.answering.policy.SelectivePolicy`
with ``combiner="xgboost"``.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from franq import InputError
from franq.apps.answering.items import QAItem
from franq.apps.answering.prompts import (
    NLI_PROMPT_LABELS, P_TRUE_000_LABELS, intrinsic_messages, nli_prompt_messages, p_true_000_messages,
)
from franq.lm.prompts import ANSWER_QUESTION, P_TRUE_LABELS, SHORT_INSTRUCTION, answer_messages, chat_text

# ---------------------------------------------------------------------------- intrinsic abstention
REFUSAL = re.compile(r"_*DONT[ _]KNOW_*|\bI (?:do not|don'?t) know\b|\bunanswerable\b|\bcannot be answered\b"
                     r"|\bnot (?:mentioned|stated|provided) in the (?:context|passages|documents)\b", re.I)
"""000's refusal string ``__DONT_KNOW__`` (also without underscores), and the usual
"I don't know" forms (003 appendix C.3 counts those as abstentions too)."""


def is_refusal(text: str | None) -> bool:
    """An empty answer, or one that says it does not know (:data:`REFUSAL`)."""
    return not (text or "").strip() or bool(REFUSAL.search(text))


class IntrinsicAbstentionCheck:
    """000's Intrinsic Abstention (section 4.1, prompt in appendix C): the model is asked
    to answer only if the context supports the answer and to output ``__DONT_KNOW__``
    otherwise; v = 1 iff it answered. A hard label (0 or 1): 000 Table 7 reads its AUC as
    precision x recall (:func:`~franq.apps.answering.decision_metrics.pr_auc`).

    With ``lm`` the model answers 000's prompt greedily (the replies are kept in
    ``answers``: the unified method's answers); without it, the item's own answer is read
    (an answer generated with any abstaining prompt, e.g. 003's "I don't know")."""

    def __init__(self, lm=None, *, max_new_tokens: int = 32):
        self.lm = lm
        self.max_new_tokens = max_new_tokens
        self.name = f"intrinsic:{lm.name}" if lm is not None else "intrinsic"
        self.answers: list[str] = []

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        if self.lm is None:
            self.answers = [it.answer or "" for it in items]
        else:
            lm, self.answers = self.lm, []
            for it in items:
                messages = intrinsic_messages(it.question, [_text(p) for p in it.passages])
                fallback = "\n\n".join(m["content"] for m in messages) + "\n"
                ids = lm.encode(chat_text(lm.tokenizer, messages, fallback=fallback))
                self.answers.append(lm.generate(ids, max_new_tokens=self.max_new_tokens).text.strip())
        return np.array([0.0 if is_refusal(a) else 1.0 for a in self.answers], dtype=np.float64)


def _text(p) -> str:
    return f"{p.title}. {p.text}" if p.title else p.text


# ---------------------------------------------------------------------------- 000 A.3 prompt-based NLI
class PromptNLIBackend:
    """000 appendix A.3: the generating model as the NLI model. The score is p("1"), the
    probability of the answer "1" as the next token (the paper uses its log-probability;
    the ranking is the same), summed over the spellings' first tokens. ``pair=True`` reads
    p("1") / (p("1") + p("0")) instead. ``predict(pairs)`` of (premise, hypothesis), so it
    serves :class:`~franq.apps.answering.verify.NLICheck` as its backend."""

    def __init__(self, lm, *, pair: bool = False, max_batch_tokens: int = 4096):
        from franq.lm.labels import LabelWords

        self.lm = lm
        self.pair = pair
        self.max_batch_tokens = max_batch_tokens
        self.words = LabelWords.lookup(lm, *NLI_PROMPT_LABELS, leading_space=True)
        self.name = f"prompt_nli:{lm.name}"

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        prompts = []
        for premise, hypothesis in pairs:
            messages = nli_prompt_messages(premise, hypothesis)
            prompts.append(self.lm.encode(chat_text(self.lm.tokenizer, messages,
                                                    fallback="\n\n".join(m["content"] for m in messages) + " ")))
        lp = np.asarray(self.lm.next_token_logprobs(prompts, self.words.candidates,
                                                    max_batch_tokens=self.max_batch_tokens), dtype=np.float64)
        if self.pair:
            return self.words.probability(lp)
        return np.exp(np.logaddexp.reduce(lp[:, :len(self.words.first_ids)], axis=1))


# ---------------------------------------------------------------------------- dual generation
@dataclass(frozen=True)
class DualScores:
    """Dual Generation over a set of answers (000 4.1 after Wu et al. 2024): each answer's
    perplexity with the passages (RAG) and without (closed book), the perplexity
    difference (000's decision function: closed minus RAG, higher = the passages made the
    model surer), each perplexity's percentile within its own set (the share of that set's
    perplexities at least as high: 1 = the surest), and the pick: the RAG answer when its
    percentile is at least the closed-book one's."""

    ppl_rag: np.ndarray
    ppl_closed: np.ndarray
    difference: np.ndarray
    pct_rag: np.ndarray
    pct_closed: np.ndarray
    picks_rag: np.ndarray


def perplexity(mean_logprob) -> np.ndarray:
    """exp(-mean token log-probability): the length-normalized perplexity."""
    return np.exp(-np.asarray(mean_logprob, dtype=np.float64))


def confidence_percentile(values, reference) -> np.ndarray:
    """For each perplexity, the share of ``reference`` perplexities >= it (lower perplexity,
    higher percentile)."""
    v, ref = np.asarray(values, dtype=np.float64), np.sort(np.asarray(reference, dtype=np.float64))
    if not len(ref):
        raise InputError("dual generation: percentiles need a reference set of perplexities")
    return (len(ref) - np.searchsorted(ref, v, side="left")) / len(ref)


def dual_perplexity_scores(mean_lp_rag, mean_lp_closed, *, reference: tuple | None = None) -> DualScores:
    """:class:`DualScores` from the answers' mean token log-probabilities. ``reference``:
    (RAG perplexities, closed-book perplexities) to take percentiles in (e.g. a
    calibration set); by default the given answers themselves, as over a benchmark."""
    rag, closed = perplexity(mean_lp_rag), perplexity(mean_lp_closed)
    ref_rag, ref_closed = reference if reference is not None else (rag, closed)
    pr, pc = confidence_percentile(rag, ref_rag), confidence_percentile(closed, ref_closed)
    return DualScores(rag, closed, closed - rag, pr, pc, pr >= pc)


# ---------------------------------------------------------------------------- 003 sampled P(True)
def sampled_p_true(p_true_per_sample, n_judgements: int, rng: np.random.Generator) -> float:
    """The share of "True" among ``n_judgements`` sampled judgements of each sampled answer:
    judgement j of answer i is True with probability ``p_true_per_sample[i]`` (the model's
    next-token choice between the two label words, sampled at temperature 1)."""
    p = np.asarray(p_true_per_sample, dtype=np.float64)
    if not len(p) or n_judgements < 1:
        raise InputError("P(True): need at least one sample and one judgement")
    return float((rng.random((len(p), n_judgements)) < p[:, None]).mean())


class SampledPTrueCheck:
    """P(True) as 003 computes it (section 5.1, after Kadavath et al. 2022): sample
    ``n_samples`` (20) answers with the passages, ask the model ``n_judgements`` (5) times
    whether each is correct, and return the share of "True" judgements. Each judgement is
    drawn from the model's two-label next-token probability with a seeded generator
    (``expected=True`` returns the mean probability instead: the draws' expectation).

    ``prompt``: ``franq`` (the chat continues with "Is your answer true?", True / False)
    or ``paper`` (000 appendix E.3's judge prompt, correct / incorrect; 003 does not print
    its P(True) prompt). The sampled answers are kept in ``samples``."""

    def __init__(self, lm, labeler, *, n_samples: int = 20, n_judgements: int = 5, temperature: float = 1.0,
                 instruction: str | None = SHORT_INSTRUCTION, max_new_tokens: int = 16, seed: int = 0,
                 expected: bool = False, prompt: str = "franq", answer_style: str = "franq"):
        if prompt not in ("franq", "paper"):
            raise InputError(f"p_true_sampled prompt: expected 'franq' or 'paper', got {prompt!r}")
        self.lm, self.labeler = lm, labeler
        self.n_samples, self.n_judgements = n_samples, n_judgements
        self.temperature, self.instruction = temperature, instruction
        self.max_new_tokens, self.seed, self.expected, self.prompt = max_new_tokens, seed, expected, prompt
        self.answer_style = answer_style  # the answer prompt's wording (the pipeline's prompt_style)
        self.name = f"p_true_sampled:{labeler.name}"
        self.samples: list[list[str]] = []

    def judge_messages(self, item: QAItem, answer: str) -> list[dict[str, str]]:
        if self.prompt == "paper":
            return p_true_000_messages(item.question, [_text(p) for p in item.passages], answer)
        return answer_messages(item.question, item.passages, instruction=self.instruction) + [
            {"role": "assistant", "content": answer}, {"role": "user", "content": ANSWER_QUESTION}]

    def predict(self, items: Sequence[QAItem]) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        labels = P_TRUE_000_LABELS if self.prompt == "paper" else P_TRUE_LABELS
        out, self.samples = [], []
        for k, it in enumerate(items):
            prompt = self.lm.rag_prompt(it.question, it.passages, reserve=self.max_new_tokens,
                                        instruction=self.instruction, style=self.answer_style)
            drawn = self.lm.sample(list(prompt.ids), self.n_samples, temperature=self.temperature,
                                   max_new_tokens=self.max_new_tokens, seed=self.seed + k,
                                   stop_at_newline=self.instruction == SHORT_INSTRUCTION)
            texts = [s.text for s in drawn.samples]
            self.samples.append(texts)
            p = self.labeler.probability([self.judge_messages(it, t) for t in texts], labels)
            out.append(float(np.mean(p)) if self.expected else sampled_p_true(p, self.n_judgements, rng))
        return np.array(out, dtype=np.float64)
