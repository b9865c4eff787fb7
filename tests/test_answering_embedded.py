"""Every sufficiency rater and verifier, and Franq.answer's decisions, end to end on the
real embedded model (slow; marked). The embedded model is small: these check that the
components run and return probabilities in range, not that they are accurate."""
from __future__ import annotations

import numpy as np
import pytest

from franq.apps.answering import Answerer
from franq.types import Passage

pytestmark = [pytest.mark.slow, pytest.mark.embedded]

PASSAGES = [Passage("The Eiffel Tower was built from 1887 to 1889 for the World's Fair in Paris.", "Eiffel Tower"),
            Passage("Gustave Eiffel's company designed and built the tower.")]
QUESTION = "When was the Eiffel Tower finished?"


@pytest.fixture(scope="module")
def franq_short():
    from franq import FranqConfig
    from franq.pipeline import Franq

    return Franq.from_config(FranqConfig.from_dict({"mode": "short", "model": {"device": "cpu"}}))


def test_every_rater_and_verifier_on_the_embedded_model(franq_short):
    from franq.apps import answering as A
    from franq.faithfulness.chat_judge import LMJudgeFaithfulness
    from franq.lm.chat import LocalChat

    lm = franq_short.lm
    labeler = A.LocalLabeler(lm)
    item = A.QAItem(QUESTION, tuple(PASSAGES), answer="1889", gold_answers=("1889",))
    judge = LMJudgeFaithfulness(lm)
    raters = [A.LabelSufficiency(labeler), A.LabelSufficiency(labeler, prompt="verbatim"),
              A.AutoraterSufficiency(LocalChat(lm), max_tokens=48), A.ContainsGoldSufficiency(),
              A.NLIGoldSufficiency(judge)]
    for rater in raters:
        p = rater.rate([item])
        assert p.shape == (1,) and 0.0 <= p[0] <= 1.0, rater.name
    verifiers = [A.TrivialCheck(), A.PreAnswerCheck(labeler), A.NLICheck(judge),
                 A.NLICheck(franq_short.faithfulness), A.DualGenerationCheck(lm), A.SelfPTrueCheck(labeler)]
    for verifier in verifiers:
        v = verifier.predict([item])
        assert v.shape == (1,) and np.isfinite(v[0]), verifier.name

    result = Answerer(franq_short).answer(QUESTION, PASSAGES, verify="p_true", fallback="closed_book", threshold=1.01)
    d = result.decision
    assert d.action == "fallback" and d.verify == "p_true" and 0.0 <= d.score <= 1.0 and isinstance(d.answer, str)
    kept = Answerer(franq_short).answer(QUESTION, PASSAGES, verify="nli", fallback="abstain", threshold=0.0)
    assert kept.decision.action == "answer" and kept.decision.answer == kept.answer
