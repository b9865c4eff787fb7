"""What the pipeline gathers about each claim before anything is scored.

The evidence stage runs the model passes a preset needs and hands each scorer and the
faithfulness backend, through each claim's :class:`~franq.stages.record.ClaimEvidence`
(a view of the answer's :class:`~franq.stages.record.AnswerRecord`, which they fill):

    passes    franq.evidence.passes.TokenPasses: the answer's tokens teacher-forced with
              the passages (p(y_t | x, r, y_<t), paper eq. 1) and without (eq. 3)
    internals the with-passages pass's attention and hidden states per answer token, reduced
              as it runs (and, when a component asks, the closed-book pass's hidden states) (franq.lm.capture.TokenInternals; gathered by TokenPasses with a
              capture spec: Lookback Lens ratios, attention on the previous token, hidden
              states at the layers the components ask for)
    samples   franq.evidence.samples.SampleDraws: N answers sampled with the passages
              (and, optionally, without), with a pairwise entailment matrix
    answer_samples  the same draws, plus the entailment between each sample and the answer
              being scored (short form, observer: scoring an answer franq did not generate)

A component declares the evidence kinds it reads in ``needs``; a preset declares the kinds
it gathers, and a component that needs more is refused when the config is built.
"""
from __future__ import annotations

PASSES = "passes"
SAMPLES = "samples"
ANSWER_SAMPLES = "answer_samples"
INTERNALS = "internals"
EVIDENCE_KINDS = {
    PASSES: "the answer's token log-probabilities with and without the passages (teacher forcing)",
    INTERNALS: "attention ratios and hidden states of the with-passages pass (hidden states of the closed-book "
               "pass too, when asked), per answer token",
    SAMPLES: "N sampled answers to the question and their pairwise entailment",
    ANSWER_SAMPLES: "the entailment between the answer being scored and each sample, and the answer's own likelihood",
}
