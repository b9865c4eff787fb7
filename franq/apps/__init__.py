"""Applications built on the scores: seeing them (``report``: a self-contained HTML
report and CSV, views shared through :mod:`franq.apps.render`), serving them (``serve``:
a local web service that keeps the model loaded), deciding what to do with a scored
answer (answer, fall back or abstain), judging whether the passages are sufficient
context, evaluating trust in a RAG system. Each application is a module (or a package) here whose ``click``
command is registered under ``"apps"`` below (another package's, in the ``franq.apps``
entry point group); ``franq`` adds it as a subcommand.

The scoring library knows no application: importing this package declares the
applications' component kinds in :mod:`franq.registry` (:func:`~franq.registry.add_kind`),
each with its built-ins; plugins add more through the entry point group ``franq.<kind>``,
and a component's settings table is ``[<kind>.<name>]`` (e.g. ``[fallbacks.model] path``)::

    apps        a click command each, a ``franq`` subcommand
    checks      answering: is the answer faithful? (``franq answer --verify``)
    fallbacks   answering: what to say instead (``--fallback``)
    raters      sufficiency: is the context sufficient? (``franq sufficiency --rater``)

The contract: an application uses franq as any other user would. It imports the public
API (``import franq``, or ``from franq import X`` for ``X`` in ``franq.__all__``), the
named extension surface (``franq.lm``: models, prompt helpers, label-word probabilities,
chat clients; ``franq.io``: input parsing; ``franq.registry``: kinds of its own;
``franq.evaluation.metrics``: the one metrics module; ``franq.cli.options``: the shared
option groups) and its own modules under ``franq.apps``; never ``franq.pipeline``,
``franq.scorers``, ``claims``, ``calibration`` or other internals. When an application
needs more, add it to the public API or the extension surface first (docs/architecture.md).
``tests/test_layout.py`` enforces this.
"""
from __future__ import annotations

from franq import registry

_DECIDE = "franq.apps.answering.decide"
_RATERS = "franq.apps.answering.sufficiency"
registry.add_kind("apps", {
    "report": "franq.apps.report:report",
    "serve": "franq.apps.serve:serve",
    "sufficiency": "franq.apps.sufficiency:sufficiency",
    "selective": "franq.apps.selective:selective",
    "trust": "franq.apps.trust:command",
}, label="application")
registry.add_kind("checks", {name: f"{_DECIDE}:{name}_check" for name in
                                ("trivial", "pre_answer", "nli", "dual", "p_true", "self_p_true",
                                 "intrinsic", "nli_prompt", "p_true_sampled")}, label="answer check")
registry.add_kind("fallbacks", {name: f"{_DECIDE}:{name}_fallback" for name in ("closed_book", "abstain", "model")},
                  label="fallback")
registry.add_kind("raters", {"label": f"{_RATERS}:label_rater", "autorater": f"{_RATERS}:autorater",
                             "contains_gold": f"{_RATERS}:contains_gold_rater",
                             "nli_gold": f"{_RATERS}:nli_gold_rater"}, label="sufficiency rater")
