"""The real embedded model (SmolLM2-135M-Instruct). Few tests; deselect with -m "not embedded"."""
from __future__ import annotations

import json
import re
from importlib import resources

import pytest
from click.testing import CliRunner

from franq.cli import main

pytestmark = pytest.mark.embedded


@pytest.fixture(scope="module")
def embedded():
    from franq.pipeline import default_franq

    return default_franq()


def test_claim_copied_from_a_passage_is_far_likelier_with_passages(embedded):
    ex = json.loads(resources.files("franq").joinpath("data/example.json").read_text())
    result = embedded.score(ex["question"], ex["passages"], ex["answer"])
    # "It was the centrepiece of the 1889 World's Fair." (passage 1); the default atomic
    # decomposer numbers claims differently from sentences, so find it by its words
    copied = next(c for c in result.scored if "centrepiece" in c.claim.text)
    lift = copied.signals["log_claim_prob"] - copied.signals["log_parametric"]
    assert lift > 5.0, lift  # more than e^5 ~ 150 times likelier with the evidence
    berlin = next(c for c in result.scored if "Berlin" in c.claim.text)
    # the default faithfulness backend (combined-v1) is calibrated on ExpertQA, where even
    # fully overlapping claims are faithful only ~2 times in 3: compare, do not expect 1.0
    assert copied.p_faithful > 0.5 > berlin.p_faithful


def test_answer_generates_and_scores(embedded):
    result = embedded.answer("What is the capital of France?",
                             ["Paris is the capital and most populous city of France."], max_new_tokens=24)
    assert result.answer.strip() and result.scored
    assert result.calibrator is not None and result.calibrator.source == "shipped"  # the embedded stack's own
    assert all(0.0 <= c.p_true_raw <= 1.0 and 0.0 <= c.p_true_calibrated <= 1.0 for c in result.scored)


def test_shipped_probes_read_the_embedded_models_pass(embedded):
    """The probe file shipped for the embedded model: its backends and scorers run on the
    same pass, and the pass's own scores do not move."""
    from franq.config import FranqConfig
    from franq.pipeline import Franq

    ex = json.loads(resources.files("franq").joinpath("data/example.json").read_text())
    config = FranqConfig.from_dict({"faithfulness": {"name": "lookback"}, "calibration": {"calibrator": "none"},
                                    "uq": {"long": {"extra": ["rauq", "truth_probe"]}}})
    probed = Franq(config, embedded.lm).score(ex["question"], ex["passages"], ex["answer"])
    plain = embedded.score(ex["question"], ex["passages"], ex["answer"])
    assert [c.uq_faith for c in probed.scored] == [c.uq_faith for c in plain.scored]
    assert all(0 < c.p_faithful < 1 and c.signals["rauq"] > 0 and 0 < c.signals["p_true_probe"] < 1
               for c in probed.scored)


@pytest.mark.slow
@pytest.mark.embedded
def test_embedded_llm_decomposer_scores_every_sentence_of_the_bundled_example(tmp_path):
    """The reported case: `--decomposer llm` on the embedded model skipped exactly the false
    sentences ("solid gold", "Berlin") and only warned. Now each is scored, and the HTML
    report highlights every claim."""
    cfg = tmp_path / "franq.toml"
    cfg.write_text(f'[decomposer]\nname = "llm"\ncache_dir = "{tmp_path / "cache"}"\n', encoding="utf-8")
    res = CliRunner().invoke(main, ["score", "--example", "--config", str(cfg), "--format", "json",
                                    "--html", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    record = json.loads(res.stdout)
    answer = record["answer"]
    covered = {i for c in record["claims"] if c["status"] == "scored"
               for a, b in c["claim"]["char_spans"] for i in range(a, b)}
    for sentence in ("The tower is made of solid gold.", "It is located in Berlin, Germany."):
        start = answer.index(sentence)
        assert set(range(start, start + len(sentence))) <= covered, sentence
    html = (tmp_path / "r.html").read_text()
    assert len(re.findall(r'<mark class="claim pb\d"', html)) >= 5
