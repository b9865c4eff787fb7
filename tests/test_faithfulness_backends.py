"""Context-PMI, combined and judge backends; the logistic JSON map; the faithfulness
protocol (``needs`` and ``predict(pairs, evidence)``); config and pipeline wiring of the
faithfulness backends."""
from __future__ import annotations

import logging
from types import SimpleNamespace

import numpy as np
import pytest

from claims.types import Claim
from conftest import assert_float32_close
from franq import registry
from franq.config import FranqConfig
from franq.errors import FranqError, InputError
from franq.evidence import PASSES
from franq.faithfulness.base import NeedsPassesError, predict_faithfulness, text_pairs
from franq.faithfulness.combined import CombinedFaithfulness
from franq.faithfulness.context_pmi import ContextPMIFaithfulness
from franq.faithfulness.features import TEXT_FEATURES, pass_features, pass_features_from_sums
from franq.faithfulness.chat_judge import LMJudgeFaithfulness, OpenAIJudgeFaithfulness
from franq.faithfulness.lexical import LexicalFaithfulness
from franq.faithfulness.logistic import LogisticMap
from franq.stages.record import ClaimEvidence
from franq.types import Passage
from franq.presets import check_config

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was built from "
           "1887 to 1889 and designed by the engineer Gustave Eiffel.")
SUPPORTED = "The Eiffel Tower in Paris was built from 1887 to 1889."
UNSUPPORTED = "Marseille hosts the largest harbour of the Mediterranean coast since 1950."


def _ctx(rag, closed, positions=(0, 1, 2), statement="c"):
    claim = Claim(text=statement, char_spans=((0, 1),), token_positions=tuple(positions), token_ids=(1, 2, 3))
    return ClaimEvidence.of(claim, passages=(Passage(CONTEXT),), statement=statement,
                            rag_logprobs=np.asarray(rag, float), closed_logprobs=np.asarray(closed, float))


def test_logistic_map_round_trips_through_json(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 2))
    y = (x[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(int)
    m = LogisticMap.fit(x, y, ("a", "b"), stack={"model": "m"})
    m.to_json(tmp_path / "m.json")
    again = LogisticMap.from_json(tmp_path / "m.json")
    np.testing.assert_allclose(again.predict(x), m.predict(x))
    assert again.stack == {"model": "m"} and m.coef[0] > abs(m.coef[1])


def test_logistic_map_errors_name_the_key(tmp_path):
    with pytest.raises(InputError, match="'coef'"):
        LogisticMap.from_json('{"features": ["a"], "coef": [1, 2], "intercept": 0}')
    with pytest.raises(InputError, match="unknown key"):
        LogisticMap.from_json('{"features": ["a"], "coef": [1], "intercept": 0, "bias": 1}')
    with pytest.raises(InputError, match="cannot read"):
        LogisticMap.from_json(tmp_path / "missing.json")


def test_pass_features_from_context_equal_those_from_sums():
    ctx = _ctx([-1.0, -0.5, -2.0, -9.0], [-2.0, -1.5, -2.5, -9.0])
    a = pass_features(ctx)
    b = pass_features_from_sums(-3.5, -6.0, 3)
    assert a == pytest.approx(b)
    assert a["pmi_mean"] == pytest.approx(2.5 / 3)


def test_context_pmi_needs_passes_and_rises_with_pmi():
    backend = ContextPMIFaithfulness()
    assert backend.needs == {PASSES} and registry.needs(ContextPMIFaithfulness) == {PASSES}
    with pytest.raises(NeedsPassesError, match="log-probabilities"):
        backend.predict([(CONTEXT, SUPPORTED)])
    p = backend.predict([(CONTEXT, "c")] * 2, [_ctx([-1, -1, -1], [-3, -3, -3]),
                                               _ctx([-3, -3, -3], [-1, -1, -1])])
    assert p[0] > p[1] and ((p > 0) & (p < 1)).all()


def test_map_for_another_model_warns(caplog):
    with caplog.at_level(logging.WARNING):
        ContextPMIFaithfulness(lm_name="some-other-model")
    assert "not calibrated for this model" in caplog.text


def test_packaged_combined_map_ranks_supported_claim_higher():
    backend = CombinedFaithfulness()
    assert backend.map.features == TEXT_FEATURES and backend.needs == frozenset()
    assert registry.needs(CombinedFaithfulness, FranqConfig()) == frozenset()
    p = backend.predict([(CONTEXT, SUPPORTED), (CONTEXT, UNSUPPORTED)])
    assert p[0] > p[1] and ((p > 0) & (p < 1)).all()
    np.testing.assert_allclose(backend.predict([(CONTEXT, SUPPORTED)], [_ctx([0], [0])]), p[:1])


def test_combined_with_pass_features_refuses_text_only_calls(tmp_path):
    m = LogisticMap(("lexical", "pmi_mean"), (0.0, 0.0), (1.0, 1.0), (1.0, 1.0), 0.0, fitted_on={"name": "t"})
    m.to_json(tmp_path / "m.json")
    backend = CombinedFaithfulness(tmp_path / "m.json")
    assert backend.needs == {PASSES}
    with pytest.raises(NeedsPassesError, match="pmi_mean"):
        backend.predict([(CONTEXT, SUPPORTED)])
    p = backend.predict([(CONTEXT, SUPPORTED)] * 2, [_ctx([0, 0, 0], [-1, -1, -1]), _ctx([0] * 3, [0] * 3)])
    assert p[0] > p[1]


def test_combined_map_with_pass_features_is_refused_in_the_short_preset(tmp_path):
    m = LogisticMap(("lexical", "pmi_mean"), (0.0, 0.0), (1.0, 1.0), (1.0, 1.0), 0.0, fitted_on={"name": "t"})
    m.to_json(tmp_path / "m.json")
    section = {"name": "combined", "map": str(tmp_path / "m.json")}
    assert registry.needs(CombinedFaithfulness, FranqConfig.from_dict({"faithfulness": section})) == {PASSES}
    with pytest.raises(InputError, match="'faithfulness.name': 'combined' cannot run in the short preset"):
        check_config(FranqConfig.from_dict({"mode": "short", "faithfulness": section}))
    check_config(FranqConfig.from_dict({"mode": "short"}))  # the packaged map reads text only: it runs in both presets


def test_predict_faithfulness_hands_each_backend_the_pairs_and_the_evidence(constant_faithfulness):
    evidence = [_ctx([0], [0], statement=SUPPORTED)]
    np.testing.assert_allclose(predict_faithfulness(constant_faithfulness(1.5), evidence), [1.0])  # clipped
    seen = {}

    class Spy:
        name = "spy"
        needs = frozenset()

        def predict(self, pairs, evidence=None):
            seen["pairs"], seen["evidence"] = list(pairs), evidence
            return np.full(len(pairs), 0.25)

    assert predict_faithfulness(Spy(), evidence)[0] == 0.25
    assert seen["pairs"] == [(CONTEXT, SUPPORTED)] == text_pairs(evidence) and seen["evidence"] == evidence
    with pytest.raises(ValueError, match="shape"):
        predict_faithfulness(SimpleNamespace(name="bad", predict=lambda p, e=None: np.zeros(3)), evidence)


def test_pipeline_hands_both_passes_to_context_pmi(tiny_lm, make_franq):
    franq = make_franq(tiny_lm, {"faithfulness": {"name": "context_pmi"}})
    backend = franq.faithfulness
    assert isinstance(backend, ContextPMIFaithfulness)
    result = franq.score("Where is the tower?", [CONTEXT], SUPPORTED)
    assert result.stack.faithfulness == "context-pmi-v1"
    for c in result.scored:
        comp = c.signals
        want = backend.map.predict(np.array([[pass_features_from_sums(
            comp["log_claim_prob"], comp["log_parametric"], comp["n_tokens"])["pmi_mean"]]]))[0]
        assert c.p_faithful == pytest.approx(want)


@pytest.mark.parametrize("kind", ["combined", "lexical", "context_pmi", "judge", "alignscore", "nli"])
def test_from_config_builds_each_backend(kind, tiny_lm_path, tmp_path):
    from franq.pipeline import Franq
    from tiny_encoders import build_alignscore, build_nli

    extra = {}
    if kind == "alignscore":
        ckpt, base = build_alignscore(tmp_path)
        extra = {"alignscore": {"checkpoint": str(ckpt), "base_model": str(base)}}
    elif kind == "nli":
        extra = {"nli": {"model": str(build_nli(tmp_path / "nli"))}}
    franq = Franq.from_config(FranqConfig.from_dict({"model": {"path": str(tiny_lm_path), "device": "cpu"},
                                                     "faithfulness": {"name": kind, **extra}}))
    result = franq.score("Where is the tower?", [CONTEXT], SUPPORTED)
    assert result.scored and all(0.0 <= c.p_faithful <= 1.0 for c in result.scored)
    assert result.stack.faithfulness == franq.faithfulness.name


def test_next_token_logprobs_batched_equal_single(tiny_lm):
    prompts = [tiny_lm.encode("Paris is the capital of"), tiny_lm.encode("The tower"), tiny_lm.encode("Who designed it?")]
    cands = [5, 17, 40]
    batched = tiny_lm.next_token_logprobs(prompts, cands)
    single = np.vstack([tiny_lm.next_token_logprobs([p], cands) for p in prompts])
    assert_float32_close(batched, single)
    assert (batched < 0).all()


def test_local_judge_is_yes_share_max_over_chunks(tiny_lm):
    judge = LMJudgeFaithfulness(tiny_lm, chunk_words=10)
    assert not set(judge.labels.first_ids) & set(judge.labels.second_ids)
    p = judge.predict([(CONTEXT, SUPPORTED), (CONTEXT, UNSUPPORTED)])
    assert p.shape == (2,) and ((p > 0) & (p < 1)).all()
    chunks = [judge.predict([(chunk, SUPPORTED)])[0] for chunk in
              ["The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
               "It was built from 1887 to 1889 and designed by the engineer Gustave Eiffel."]]
    assert p[0] == pytest.approx(max(chunks))


class _FakeClient:
    """An OpenAI-compatible client double returning fixed top log-probabilities."""

    def __init__(self, top):
        self.top, self.calls = top, []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **kwargs):
        self.calls.append(kwargs)
        alts = [SimpleNamespace(token=t, logprob=lp) for t, lp in self.top] if self.top is not None else None
        logprobs = SimpleNamespace(content=[SimpleNamespace(top_logprobs=alts)]) if alts is not None else None
        return SimpleNamespace(choices=[SimpleNamespace(logprobs=logprobs)])


def test_openai_judge_reads_yes_share_from_top_logprobs():
    client = _FakeClient([("Yes", np.log(0.6)), (" yes", np.log(0.1)), ("No", np.log(0.1)), ("Maybe", np.log(0.2))])
    judge = OpenAIJudgeFaithfulness("judge-model", client=client)
    p = judge.predict([(CONTEXT, SUPPORTED)])
    assert p[0] == pytest.approx(0.7 / 0.8)
    call = client.calls[0]
    assert call["logprobs"] is True and call["max_tokens"] == 1 and SUPPORTED in call["messages"][-1]["content"]


def test_openai_judge_without_logprobs_names_the_server():
    judge = OpenAIJudgeFaithfulness("m", base_url="http://localhost:9/v1", client=_FakeClient(None))
    with pytest.raises(FranqError, match="base_url 'http://localhost:9/v1'.*no log-probabilities"):
        judge.predict([(CONTEXT, SUPPORTED)])


@pytest.mark.embedded
def test_embedded_judge_reads_single_yes_no_tokens():
    """SmolLM2-135M is far too small to judge well (see benchmarks/results/faithfulness-backends.md); this
    checks only the plumbing on a real chat tokenizer: yes / no are single tokens."""
    from franq.lm import CausalLM

    lm = CausalLM.load(None, device="cpu")
    judge = LMJudgeFaithfulness(lm)
    assert all(len(lm.encode(w)) == 1 for w in ("yes", "no"))
    p = judge.predict([(CONTEXT, SUPPORTED), (CONTEXT, UNSUPPORTED)])
    assert ((p > 0) & (p < 1)).all()


def test_lexical_is_still_a_plain_backend():
    backend = LexicalFaithfulness()
    assert backend.needs == frozenset() and registry.needs(LexicalFaithfulness) == frozenset()
    assert backend.predict([(CONTEXT, SUPPORTED)])[0] == backend.predict([(CONTEXT, SUPPORTED)], [_ctx([0], [0])])[0]
