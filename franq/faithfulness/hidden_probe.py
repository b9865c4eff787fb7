"""Hidden-state probe (SAPLMA-style): P_faithful from the with-passages pass's hidden states.

The claim's hidden states after the probe's decoder layers, averaged over its tokens and
captured during the pass FRANQ runs anyway (:mod:`franq.lm.capture`), go through a
logistic regression fitted by ``franq fit probe`` on claims labelled ``is_faithful``.
The probe belongs to the model it was fitted with; the embedded model's ships in
``franq/data/``. Configured as ``faithfulness.name = "hidden_probe"`` (``"probe"`` before
0.2.0: that name is the short-form preset's); its results keep the id ``probe-v1``.
"""
from __future__ import annotations

from franq.faithfulness.lookback import ProbeFaithfulness


class HiddenProbeFaithfulness(ProbeFaithfulness):
    """Logistic regression on the claim's pooled hidden states."""

    kind = "hidden"
    name = "probe-v1"
