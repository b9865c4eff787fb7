"""Sufficiency raters, answer checks, fallbacks and the answering
apps on tiny models and test doubles (fast). The real embedded model: the slow test at
the end; an OpenAI-compatible server: tests/test_answering_openai.py."""
from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import assert_float32_close
from franq.apps.answering import (
    Answerer,
    ClosedBookFallback, ContainsGoldSufficiency, DualGenerationCheck, LabelSufficiency, LocalLabeler,
    NLIGoldSufficiency, NLICheck, PreAnswerCheck, PTrueCheck, QAItem, SelfPTrueCheck, ThresholdPolicy,
    TrivialCheck, parse_verdict, read_qa_records,
)
from franq.apps.answering.sufficiency import token_chunks
from franq.apps.answering.verify import overlapping_chunks
from franq.cli import main
from franq.config import FranqConfig
from franq.errors import InputError
from franq.io import parse_example
from franq.apps.answering import prompts as P
from franq.lm.prompts import SHORT_INSTRUCTION
from franq.types import Passage
from franq.presets import check_config

PASSAGES = (Passage("The Eiffel Tower was built in 1889 by Gustave Eiffel.", "Eiffel Tower"),
            Passage("Paris is the capital of France."))
ITEM = QAItem("When was the Eiffel Tower built?", PASSAGES, answer="1889", gold_answers=("1889",))
PLAIN = SimpleNamespace(chat_template=None)

FAMILIES = {
    P.SUFFICIENCY_AUTORATER_VERSION: lambda: [P.SUFFICIENCY_AUTORATER_TEMPLATE, P.SUFFICIENCY_JSON_KEY],
    P.SUFFICIENCY_LABEL_VERSION: lambda: [P.SUFFICIENCY_LABEL_TEMPLATES["corrected"],
                                          P.SUFFICIENCY_LABEL_TEMPLATES["verbatim"], repr(P.SUFFICIENCY_LABELS)],
    P.PRE_ANSWER_VERSION: lambda: [P.PRE_ANSWER_TEMPLATE, repr(P.PRE_ANSWER_LABELS)],
    P.AWF_HYPOTHESIS_VERSION: lambda: [P.AWF_HYPOTHESIS],
}
PINS = {
    "sufficiency-autorater-v1": "5b81023edc0106dd7ce2d756096ee4a566bdf5980ffaefa8feb24594c2a673e9",
    "sufficiency-label-v1": "505e888c20d4d7edfa02ec045abe79be4a2b7eff81b04172e60ff5f6ad505efe",
    "pre-answer-v1": "68fb2815c1d3053198d2655b6c14207c5614205f328da826dba3aea4628d2b25",
    "awf-hypothesis-v1": "c6e7f7cbec3d8f1e9bfe7d1726ff0be88d3d2160a5188805cf96d8b12c4b41e3",
}


def test_each_answering_prompt_family_is_pinned_to_its_version():
    for version, texts in FAMILIES.items():
        digest = hashlib.sha256("\x00".join(texts()).encode()).hexdigest()
        assert digest == PINS[version], f"the {version!r} prompts changed: give them a new version and pin {digest}"


def test_the_verbatim_label_prompt_keeps_the_published_swap_and_the_default_corrects_it():
    corrected, verbatim = P.SUFFICIENCY_LABEL_TEMPLATES["corrected"], P.SUFFICIENCY_LABEL_TEMPLATES["verbatim"]
    assert "1. sufficient: The documents are sufficient" in corrected
    assert "1. sufficient: The documents are not sufficient" in verbatim  # 003 appendix C.2 as published
    assert corrected.replace("are sufficient", "\0").replace("are not sufficient", "are sufficient").replace(
        "\0", "are not sufficient") == verbatim
    text = P.SUFFICIENCY_AUTORATER_TEMPLATE.format(question="Q?", context="C.", timestamp="2024-01-01")
    assert text.count("timestamp 2024-01-01") == 2 and text.endswith("### REFERENCES\nC.\n")
    assert '{"Sufficient Context": 1}' in text


@pytest.mark.parametrize("reply, verdict", [
    ('### EXPLANATION\nIt says 2001.\n### JSON\n```\n{"Sufficient Context": 1}\n```', 1),
    ('{"Sufficient Context": 1} ... on reflection {"Sufficient Context": 0}', 0),
    ("Sufficient Context: 1", 1),
    ("I cannot tell.", None),
    ('{"Sufficient Context": "maybe"}', None),
])
def test_parse_verdict(reply, verdict):
    assert parse_verdict(reply) == verdict


class FakeLabeler:
    """Counts words as tokens; P(first label) = 0.9 when the prompt mentions 1889."""

    name = "fake"

    def __init__(self):
        self.calls = []

    def count_tokens(self, text):
        return len(text.split())

    def probability(self, messages_list, labels):
        self.calls.append((messages_list, labels))
        return np.array([0.9 if "1889" in m[-1]["content"] else 0.2 for m in messages_list])


def test_label_rater_chunks_the_context_and_takes_the_max():
    assert token_chunks("a b c d e", lambda t: len(t.split()), 2) == ["a b", "c d", "e"]
    lab = FakeLabeler()
    long_item = QAItem("Q?", (Passage("filler " * 30), Passage("built in 1889")))
    rater = LabelSufficiency(lab, chunk_tokens=20)
    p = rater.rate([long_item, QAItem("Q?", (Passage("nothing here"),))])
    assert p.tolist() == [0.9, 0.2]
    messages, labels = lab.calls[0]
    assert len(messages) == 3 and labels == P.SUFFICIENCY_LABELS  # two chunks for the first item, one for the second
    assert "1. sufficient: The documents are sufficient" in messages[0][0]["content"]
    verbatim = LabelSufficiency(lab, prompt="verbatim")
    verbatim.rate([ITEM])
    assert "are not sufficient" in lab.calls[-1][0][0][0]["content"].split("2.")[0]
    assert verbatim.name == "label:fake+verbatim"
    with pytest.raises(InputError, match="prompt"):
        LabelSufficiency(lab, prompt="other")


class RecordingBackend:
    """P(supported) = 1 when the hypothesis' quoted answer appears in the premise."""

    name = "recording"
    needs = frozenset()

    def __init__(self):
        self.pairs = []

    def predict(self, pairs, evidence=None):
        self.pairs += pairs
        return np.array([float(h.rsplit('"', 2)[1] in c) for c, h in pairs])


def test_reference_based_raters():
    items = [ITEM, QAItem("Q?", PASSAGES, gold_answers=("Lyon",))]
    assert ContainsGoldSufficiency().rate(items).tolist() == [1.0, 0.0]
    backend = RecordingBackend()
    rater = NLIGoldSufficiency(backend, threshold=0.5)
    assert rater.rate(items).tolist() == [1.0, 0.0]
    assert backend.pairs[0] == ("Eiffel Tower. The Eiffel Tower was built in 1889 by Gustave Eiffel.",
                                'The answer to the question "When was the Eiffel Tower built?" is: "1889"')
    assert rater.label(items).tolist() == [1.0, 0.0]
    with pytest.raises(InputError, match="gold_answers"):
        ContainsGoldSufficiency().rate([QAItem("Q?", PASSAGES)])


def test_nli_check_uses_each_passage_and_20_word_overlapping_chunks():
    words = [f"w{i}" for i in range(100)]
    chunks = overlapping_chunks(" ".join(words), max_words=40, overlap=20)
    assert [c.split()[0] for c in chunks] == ["w0", "w20", "w40", "w60"] and chunks[-1].split()[-1] == "w99"
    assert all(len(c.split()) <= 40 for c in chunks)
    backend = RecordingBackend()
    v = NLICheck(backend).predict([ITEM, QAItem(ITEM.question, PASSAGES, answer="1900")])
    assert v.tolist() == [1.0, 0.0]
    assert len(backend.pairs) == 4 and backend.pairs[1][0] == "Paris is the capital of France."
    assert TrivialCheck().predict([ITEM, ITEM]).tolist() == [1.0, 1.0]


def test_p_true_check_takes_the_lowest_claim(make_franq, tiny_lm):
    result = make_franq(tiny_lm).score("Where is the tower?", ["It is in Paris. It opened in 1889."],
                                       "It is in Paris. It opened in 1889.")
    raw = [c.p_true_raw for c in result.scored]
    assert PTrueCheck().predict([QAItem("q", PASSAGES, answer="a", score=result)])[0] == pytest.approx(min(raw))
    with pytest.raises(InputError, match="FRANQ result"):
        PTrueCheck().predict([ITEM])


def test_lm_checks_and_fallback_on_a_tiny_model(tiny_lm):
    lab = LocalLabeler(tiny_lm)
    for verifier in (PreAnswerCheck(lab), SelfPTrueCheck(lab)):
        p = verifier.predict([ITEM, ITEM])
        assert p.shape == (2,) and np.all((p >= 0) & (p <= 1)) and p[0] == pytest.approx(p[1])
    dual = DualGenerationCheck(tiny_lm, max_new_tokens=4, score="log_prob")
    given = QAItem(ITEM.question, PASSAGES, answer="1889", closed_answer="in 1900")
    d = dual.predict([given])[0]
    rag = tiny_lm.rag_prompt(ITEM.question, PASSAGES, reserve=4, instruction=SHORT_INSTRUCTION)
    closed = tiny_lm.closed_book_prompt(ITEM.question, instruction=SHORT_INSTRUCTION)
    a, b = tiny_lm.continuation_logprobs([(rag.ids, tiny_lm.encode("1889")), (closed.ids, tiny_lm.encode("in 1900"))])
    assert_float32_close(d, a.mean() - b.mean())
    dual.predict([ITEM])  # no closed answer given: generated
    assert isinstance(dual.closed_answers[0], str)
    assert isinstance(ClosedBookFallback(tiny_lm, max_new_tokens=4).answer(ITEM.question, PASSAGES), str)


def test_answer_decides_with_a_check_a_fallback_and_a_policy(make_franq, tiny_lm, tmp_path):
    franq = make_franq(tiny_lm, {"model": {"max_new_tokens": 6}})
    plain = franq.answer(ITEM.question, list(PASSAGES))
    assert plain.decision is None  # the existing call is unchanged
    kept = Answerer(franq).answer(ITEM.question, list(PASSAGES), verify="trivial", fallback="closed_book")
    assert kept.decision.action == "answer" and kept.decision.answer == kept.answer
    fell = Answerer(franq).answer(ITEM.question, list(PASSAGES), verify="nli", fallback="closed_book", threshold=2.0)
    assert fell.decision.action == "fallback" and fell.decision.fallback == "closed_book"
    assert isinstance(fell.decision.answer, str) and fell.decision.verify == "nli:lexical-v1"
    ThresholdPolicy("nli", "abstain", 2.0).to_json(tmp_path / "policy.json")
    out = Answerer(franq).answer(ITEM.question, list(PASSAGES), policy=str(tmp_path / "policy.json"))
    assert out.decision.action == "abstain" and out.decision.answer is None
    assert out.decision.policy == str(tmp_path / "policy.json")
    with pytest.raises(InputError, match="differs from the policy"):
        Answerer(franq).answer(ITEM.question, list(PASSAGES), verify="dual", policy=str(tmp_path / "policy.json"))
    with pytest.raises(InputError, match="unknown answer check"):
        Answerer(franq).answer(ITEM.question, list(PASSAGES), verify="magic")
    with pytest.raises(InputError, match="fallback"):
        Answerer(franq).answer(ITEM.question, list(PASSAGES), verify="trivial", fallback="pray")


def test_records_accept_gold_fields_and_keep_rejecting_unknown_ones(tmp_path):
    ex = parse_example({"question": "q", "passages": ["p"], "answer": "a", "gold_answers": ["x"],
                        "gold_passages": [{"title": "T", "text": "x"}], "sufficient": True})
    assert ex.labels == {"gold_answers": ["x"], "gold_passages": [{"title": "T", "text": "x"}], "sufficient": True}
    for bad, field in (({"gold_answers": "x"}, "gold_answers"), ({"sufficient": 1}, "sufficient"),
                       ({"gold_passages": []}, "gold_passages"), ({"extra": 1}, "unknown field")):
        with pytest.raises(InputError, match=field):
            parse_example({"question": "q", "passages": ["p"], "answer": "a", **bad}, strict=True)
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"id": 1, "question": "q", "passages": ["p"], "note": "kept"}) + "\n")
    assert "unknown field" in next(read_qa_records(str(path))).error
    rec = next(read_qa_records(str(path), pass_through=True))
    assert rec.error is None and rec.keep == {"note": "kept"} and rec.id == "1"


def test_sufficiency_and_selective_apps(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "question": "When?", "passages": ["Built in 1889."], "gold_answers": ["1889"], "sufficient": True},
        {"id": "b", "question": "When?", "passages": ["Paris."], "gold_answers": ["1889"]},
        {"id": "c", "question": "When?", "passages": ["Paris."]},  # no gold answers: an error line
        "not an object"]) + "\n")
    out, errs = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    res = CliRunner().invoke(main, ["sufficiency", str(src), "-o", str(out), "--rater", "contains_gold",
                                    "--errors", str(errs)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["sufficient_pred"]) for r in rows] == [("a", True), ("b", False)]
    assert rows[0]["sufficient"] is True and rows[0]["gold_answers"] == ["1889"]
    bad = [json.loads(line) for line in errs.read_text().splitlines()]
    assert sorted(b["line"] for b in bad) == [3, 4] and any("gold_answers" in b["error"] for b in bad)

    rng = np.random.default_rng(0)
    sig = tmp_path / "signals.jsonl"
    s = rng.random(60)
    sig.write_text("\n".join(json.dumps({"nli": float(x), "other": float(rng.random()), "correct": int(x > 0.4),
                                         "closed_correct": int(x <= 0.4)}) for x in s) + "\n")
    res = CliRunner().invoke(main, ["selective", "fit", str(sig), "-o", str(tmp_path / "sel.json"),
                                    "--features", "nli,other", "--coverage", "0.5"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "sel.json").read_text())["kind"] == "franq.selective-policy"
    res = CliRunner().invoke(main, ["selective", "threshold", str(sig), "-o", str(tmp_path / "thr.json"),
                                    "--score", "nli", "--fallback", "closed_book", "--fallback-label", "closed_correct"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "thr.json").read_text())["threshold"] == min(x for x in s if x > 0.4)
    res = CliRunner().invoke(main, ["selective", "threshold", str(sig), "-o", str(tmp_path / "x.json"),
                                    "--score", "missing"])
    assert res.exit_code != 0 and "'missing' must be a number" in res.output


def test_answer_command_prints_the_decision(tiny_lm_path):
    args = ["answer", "-q", ITEM.question, "-p", PASSAGES[0].text, "--model", str(tiny_lm_path), "--faithfulness",
            "lexical", "--max-new-tokens", "4", "--verify", "nli", "--fallback", "abstain", "--verify-threshold", "2"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert "Decision: abstain (nli:lexical-v1 score" in res.output and "(abstained)" in res.output
    res = CliRunner().invoke(main, args + ["--format", "json"])
    record = json.loads(res.output)
    assert record["decision"]["action"] == "abstain" and record["decision"]["answer"] is None


def test_the_model_fallback_is_named_in_the_config(make_franq, tiny_lm, tiny_lm_path):
    franq = make_franq(tiny_lm, {"model": {"max_new_tokens": 4}, "fallbacks": {"model": {"path": str(tiny_lm_path)}}})
    out = Answerer(franq).answer(ITEM.question, list(PASSAGES), verify="nli", fallback="model", threshold=2.0)
    assert out.decision.action == "fallback" and out.decision.fallback.startswith("model:")
    with pytest.raises(InputError, match=r"\[fallbacks.model\] path"):
        Answerer(make_franq(tiny_lm)).answer(ITEM.question, list(PASSAGES), verify="nli", fallback="model")
    with pytest.raises(InputError, match=r"fallback: .*'model:"):  # the model:PATH form, removed in 0.2.0
        Answerer(make_franq(tiny_lm, {"model": {"max_new_tokens": 4}})).answer(
            ITEM.question, list(PASSAGES), verify="nli", fallback=f"model:{tiny_lm_path}", threshold=2.0)


def test_checks_fallbacks_and_raters_are_registry_kinds_declared_by_the_apps():
    from franq import registry
    from franq.apps.answering import RATERS, CHECKS, make_rater

    assert registry.names("checks")[:len(CHECKS)] == list(CHECKS)
    assert registry.names("fallbacks") == ["closed_book", "abstain", "model"]
    assert registry.names("raters")[:4] == list(RATERS)
    assert {"checks", "fallbacks", "raters", "apps"} <= set(registry.kinds())
    config = FranqConfig.from_dict({"raters": {"label": {"prompt": "verbatim", "chunk_tokens": 20}}})
    rater = make_rater("label", config, lm=SimpleNamespace(name="fake"))
    assert rater.name == "label:local:fake+verbatim" and rater.chunk_tokens == 20
    assert make_rater("label", config, lm=SimpleNamespace(name="fake"), prompt="corrected").prompt == "corrected"
    lexical = FranqConfig.from_dict({"faithfulness": {"name": "lexical"}})
    assert make_rater("nli_gold", lexical, threshold=0.7, prompt="ignored").threshold == 0.7
    with pytest.raises(InputError, match="'raters.label.chunk_tokens': expected an integer"):
        check_config(FranqConfig.from_dict({"raters": {"label": {"chunk_tokens": "many"}}}))
    with pytest.raises(InputError, match="'fallbacks.model.paht': unknown setting; known: \\['path'\\]"):
        check_config(FranqConfig.from_dict({"fallbacks": {"model": {"paht": "x"}}}))
    with pytest.raises(InputError, match="rater: unknown sufficiency rater 'magic'"):
        make_rater("magic")


def test_franq_answer_takes_no_deciding_options(make_franq, tiny_lm):
    """Deciding (verify, fallback) is the answering app's job; the forwarding message went in 0.2.0."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'verify'"):
        make_franq(tiny_lm).answer(ITEM.question, list(PASSAGES), verify="nli", fallback="closed_book")
