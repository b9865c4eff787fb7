"""What the workbench's two halves share: the one public module :mod:`franq.fit` imports
from :mod:`franq.evaluation` (tests/test_workbench_common.py keeps it so).

The benchmark files and their splits (``data``), the observe cache's keys and samples
(``observe``), the committed results' names (``benchmark``), the labelled short-form units
and what counts as an attempted / correct answer (``units``), the short-form method group
(``methods``) and the metrics. Nothing here imports :mod:`franq.fit`, so the evaluation
modules that measure what fit builds may import it without a cycle.
"""
from __future__ import annotations

from franq.evaluation.benchmark import read_records, slug
from franq.evaluation.data import (expertqa_held_out, expertqa_seen_in_train, load_nq_open, passage_answers,
                                   raw_data_dir, seeded_lines)
from franq.evaluation.methods import SHORT
from franq.evaluation.metrics import auroc, bootstrap, ece, pr_auc
from franq.evaluation.observe import cached_sample_set, long_key, short_key
from franq.evaluation.units import NamedModel, attempted, is_correct, short_units

__all__ = [
    "SHORT", "NamedModel", "attempted", "auroc", "bootstrap", "cached_sample_set", "ece", "expertqa_held_out",
    "expertqa_seen_in_train", "is_correct", "load_nq_open", "long_key", "passage_answers", "pr_auc", "raw_data_dir",
    "read_records", "seeded_lines", "short_key", "short_units", "slug",
]
