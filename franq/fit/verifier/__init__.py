"""franq's verifier, as fitted (``franq fit verifier``); the scoring side is :mod:`franq.verifier`.

    recipe    the recipes of v1 and the shipped v7 (manifest, base, settings): the defaults
              of ``franq fit verifier`` and what ``franq fit shipped --check`` compares
    data      training and dev pairs from a manifest (SNLI, synthetic claims, ExpertQA, WiCE)
    corrupt   contradicted claims: one typed substitution per claim
    qa        nq-open question-answer and declarative pairs
    contrast  contrastive pairs at scale (issue 44): typed minimal edits next to paraphrased
              twins, same-topic not-mentioned claims, balanced so no surface cue tells the label
    edits     the typed-slot edits and rule-based paraphrases contrast makes them with
    balance   the cue features, the resampling that keeps them from telling the label, the
              cue-only baseline
    train     fine-tuning, dev metrics and the card
    eval      held-out checks of the calibrators fitted on the shipped verifier
"""
