"""The stages :class:`franq.pipeline.Franq` runs, in this order, one module each::

    claims.py        answer -> claims aligned to its tokens (opens one AnswerRecord per answer)
    evidence.py      the preset's passes or samples fill each record; scorable claims -> ClaimBatch
    uq.py            UQ_faith, UQ_unfaith and extra scorers -> batch.uq_faith / uq_unfaith / signals
    faithfulness.py  the backend reads each claim's passages and statement -> batch.p_supported (+ conditions)
    mix.py           P(true) = P_f * UQ_faith + (1 - P_f) * UQ_unfaith -> batch.p_true_raw
    calibrate.py     the preset's calibrator -> batch.calibrated
    result.py        record + batch -> AnswerScore (ClaimScore per claim)

``record.py`` holds what they fill in (:class:`~franq.stages.record.AnswerRecord`,
:class:`~franq.stages.record.ClaimEvidence`, :class:`~franq.stages.record.ClaimBatch`);
``preset.py`` builds the components one preset runs (:class:`~franq.stages.preset.PresetPipeline`).
"""
