"""Answer, fall back or abstain (papers 000 "Generate but Verify" and 003 "Sufficient
Context"): the application namespace ``franq.apps.answering``.

    decide        Answerer: a Franq pipeline that also verifies, falls back or abstains
    prompts       the sufficiency, pre-answering and AwF hypothesis prompts, with versions
    sufficiency   SufficiencyRater protocol; AutoraterSufficiency (003's 1-shot CoT prompt on any
                  chat model), LabelSufficiency (FLAMe-style label probability, 1600-token
                  chunks), ContainsGoldSufficiency and NLIGoldSufficiency (need gold answers)
    verify        AnswerCheck protocol; TrivialCheck, PreAnswerCheck, NLICheck,
                  DualGenerationCheck, PTrueCheck (FRANQ), SelfPTrueCheck; the
                  fallbacks ClosedBookFallback, ModelFallback, AbstainFallback
    paper_methods IntrinsicAbstentionCheck (000), PromptNLIBackend (000 A.3), Dual Generation's
                  perplexities / percentiles / pick, SampledPTrueCheck (003: 20 samples x 5 judgements)
    qa_records    read_qa_records: JSONL records with optional gold labels (--pass-through)
    labelers      LocalLabeler / OpenAILabeler: label-word probabilities of chat prompts
    policy        ThresholdPolicy (k-fold CV threshold for answer / fallback), SelectivePolicy
                  (logistic regression over signals, out-of-fold), load_policy
    decision_metrics  AwF / SfC precision and recall, max F1, PR-AUC, fallback utility, accuracy at a
                  fallback rate, outcome split, selective curve / AUC, bootstrap intervals

Every score is "higher = more likely sufficient / faithful / correct".
"""
from __future__ import annotations

from franq.apps.answering import decision_metrics
from franq.apps.answering.decide import FALLBACKS, CHECKS, Answerer, build_fallback, build_check
from franq.apps.answering.items import QAItem
from franq.apps.answering.labelers import LocalLabeler, OpenAILabeler
from franq.apps.answering.paper_methods import (
    IntrinsicAbstentionCheck, PromptNLIBackend, SampledPTrueCheck, dual_perplexity_scores, is_refusal,
)
from franq.apps.answering.policy import SelectivePolicy, ThresholdPolicy, load_policy
from franq.apps.answering.qa_records import QARecord, read_qa_records
from franq.apps.answering.sufficiency import (
    RATERS, AutoraterSufficiency, ContainsGoldSufficiency, LabelSufficiency, NLIGoldSufficiency, SufficiencyRater,
    make_rater, parse_verdict,
)
from franq.apps.answering.verify import (
    AbstainFallback, ClosedBookFallback, DualGenerationCheck, ModelFallback, NLICheck, OpenAIDualGeneration,
    PreAnswerCheck, PTrueCheck, SelfPTrueCheck, TrivialCheck, AnswerCheck,
)

__all__ = [
    "AbstainFallback", "Answerer", "AutoraterSufficiency", "ClosedBookFallback", "ContainsGoldSufficiency",
    "DualGenerationCheck", "FALLBACKS", "IntrinsicAbstentionCheck", "PromptNLIBackend", "SampledPTrueCheck",
    "dual_perplexity_scores", "is_refusal", "LabelSufficiency", "LocalLabeler", "ModelFallback", "NLIGoldSufficiency",
    "NLICheck", "OpenAIDualGeneration", "OpenAILabeler", "PTrueCheck", "PreAnswerCheck", "QAItem", "QARecord", "RATERS",
    "SelectivePolicy",
    "SelfPTrueCheck", "SufficiencyRater", "ThresholdPolicy", "TrivialCheck", "CHECKS", "AnswerCheck",
    "build_fallback", "build_check", "load_policy", "make_rater", "decision_metrics", "parse_verdict", "read_qa_records",
]
