"""The benchmark harness behind ``franq bench`` (docs/BENCHMARKS.md), and the one metrics module.

    benchmark.py the harness: observe (cached model passes) and report (tables, plots, committed results)
    data.py      the benchmark files (nq-open with its corrupted variant; ExpertQA)
    observe.py   the model passes, cached and resumable, one record per answer
    units.py     labelled units (claims / answers) with every method's raw signal
    p_true.py    the P(True) baseline: follow-up questions on the kept cache
    methods.py   the paper's method groups: general, RAG-specific, XGBoost, FRANQ variants
    report.py    bootstrap intervals, paper-style tables, JSON, plots
Metrics (PR-AUC, PRR, AUROC, ECE, the bootstrap) live in :mod:`franq.evaluation.metrics`.
"""
