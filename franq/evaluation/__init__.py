"""The benchmark harness behind ``franq bench`` (docs/BENCHMARKS.md), and the one metrics module.

    benchmark.py the harness: observe (cached model passes) and report (tables, plots, committed results)
    data.py      the benchmark files (nq-open with its corrupted variant; ExpertQA)
    observe.py   the model passes, cached and resumable, one record per answer
    units.py     labelled units (claims / answers) with every method's raw signal
    p_true.py    the P(True) baseline: follow-up questions on the kept cache
    methods.py   the paper's method groups: general, RAG-specific, XGBoost, FRANQ variants
    report.py    bootstrap intervals, paper-style tables, JSON, plots
    common.py    what franq.fit uses of this package: its one door (NamedModel, data, keys, metrics)

The quality evaluations beside the paper's tables, one module each (``franq bench NAME``,
franq/cli/bench_quality.py):

    faithfulness_backends.py  faithfulness     calibrators.py       calibration
    equivalence_judges.py     judges           short_cost.py        short
    observer_pairs.py         observer         se_probe.py          se-probe
    internals_probes.py       internals        internals_cache.py   internals-data
    decomposition.py          decompose        atomic_claims.py     atomic
Metrics (PR-AUC, PRR, AUROC, ECE, the bootstrap) live in :mod:`franq.evaluation.metrics`.
"""
