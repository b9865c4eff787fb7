"""franq's verifier: windows that never cross passages, aggregation rules,
batching, the ``verifier`` faithfulness backend and the fields it puts in the results."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from conftest import assert_float32_close, make_franq
from franq.errors import InputError, ModelNotFoundError
from franq.results import read_results, result_record
from franq.verifier import Verifier, aggregate, windows
from franq.verifier.windows import fit_windows, passage_windows
from tiny_encoders import build_verifier

QUESTION = "Where is the Eiffel Tower?"
PASSAGES = ["The Eiffel Tower is a wrought iron lattice tower in Paris, France. It was built from 1887 to 1889. "
            "Gustave Eiffel designed it. It is the largest tower in Europe by visitors.",
            "The Louvre is a museum in Paris. It holds the Mona Lisa."]
ANSWER = "The Eiffel Tower is in Paris. The tower is made of gold. It was built in 1889."


@pytest.fixture(scope="module")
def verifier(verifier_dir):
    return Verifier(verifier_dir)


# ---------------------------------------------------------------------- windows
def test_windows_never_cross_passages_and_cover_every_sentence():
    ws = windows(PASSAGES, window_words=12, overlap_sentences=1)
    assert {w.passage for w in ws} == {0, 1}
    for w in ws:
        assert PASSAGES[w.passage][w.start:w.end] == w.text
        assert len(w.text.split()) <= 12
    covered = " ".join(w.text for w in ws if w.passage == 0)
    for sentence in ("Gustave Eiffel designed it.", "It is the largest tower in Europe by visitors."):
        assert sentence in covered


def test_consecutive_windows_overlap_by_a_sentence():
    text = "One two three. Four five six. Seven eight nine. Ten eleven twelve."
    ws = passage_windows(text, window_words=6, overlap_sentences=1)
    assert [w.text for w in ws] == ["One two three. Four five six.", "Four five six. Seven eight nine.",
                                    "Seven eight nine. Ten eleven twelve."]
    assert [w.text for w in passage_windows(text, window_words=6, overlap_sentences=0)] == [
        "One two three. Four five six.", "Seven eight nine. Ten eleven twelve."]


def test_a_sentence_longer_than_a_window_is_split_at_words():
    text = " ".join(f"w{i}" for i in range(25)) + ". Short one."
    ws = passage_windows(text, window_words=10, overlap_sentences=1)
    assert all(len(w.text.split()) <= 10 for w in ws)
    assert ws[0].text.split() == [f"w{i}" for i in range(10)]
    assert "w24." in " ".join(w.text for w in ws) and ws[-1].text.endswith("Short one.")


def test_empty_passages_have_no_windows_and_fit_windows_halves_by_tokens():
    assert windows(["", "   "]) == []
    ws = passage_windows("a b c d e f g h", window_words=8)
    halves = fit_windows(ws, ["a b c d e f g h"], lambda t: len(t.split()), 3)
    assert [w.text for w in halves] == ["a b", "c d", "e f", "g h"]


# ---------------------------------------------------------------------- aggregation
P = np.array([[0.05, 0.05, 0.90],   # about something else
              [0.70, 0.10, 0.20],   # supports
              [0.10, 0.60, 0.30],   # contradicts, and speaks about the claim
              [0.02, 0.45, 0.53]])  # a stray contradiction in a window not about the claim


def test_max_support_takes_the_best_support_and_contradiction_from_windows_that_speak():
    p, best = aggregate(P, "max_support")
    assert p == pytest.approx([0.70 / 1.30, 0.60 / 1.30, 0.0]) and best == 1
    q, best = aggregate(P[[0, 2, 3]], "max_support")
    assert q == pytest.approx([0.10, 0.60, 0.30]) and best == 1  # the contradicting window is the evidence
    r, best = aggregate(P[[0, 3]], "max_support")  # none speaks: the most relevant window's contradiction
    assert r == pytest.approx([0.05, 0.45, 0.50]) and best == 1


def test_the_default_reads_the_most_relevant_window():
    # the bundled example's "built from 1887 to 1889": one passage states it, the other seems to contradict
    two = np.array([[0.915, 0.061, 0.024], [0.108, 0.836, 0.056]])
    p, best = aggregate(two)
    assert p == pytest.approx(two[0]) and best == 0
    s, c, _ = aggregate(two, "max_support")[0]  # the rule before: both scaled down to about a coin flip
    assert s == pytest.approx(0.915 / 1.751) and c == pytest.approx(0.836 / 1.751)


def test_other_rules_and_their_evidence():
    assert aggregate(P, "relevant")[0] == pytest.approx(P[1]) and aggregate(P, "relevant")[1] == 1
    assert aggregate(P, "decisive")[1] == 1
    p, _ = aggregate(P, "max")
    assert p.sum() == pytest.approx(1.0) and p[0] > p[2]
    assert aggregate(np.zeros((0, 3)))[1] is None
    with pytest.raises(InputError, match="aggregation"):
        aggregate(P, "mean")


@pytest.mark.parametrize("rule", ["max_support", "relevant", "decisive", "max"])
def test_every_rule_returns_probabilities_summing_to_one(rule):
    rng = np.random.default_rng(0)
    for _ in range(50):
        w = rng.dirichlet([1, 1, 1], size=rng.integers(1, 6))
        p, best = aggregate(w, rule)
        assert p.sum() == pytest.approx(1.0) and (p >= 0).all() and 0 <= best < len(w)


# ---------------------------------------------------------------------- the model
def test_predict_batched_equals_one_at_a_time(verifier_dir):
    v = Verifier(verifier_dir, max_batch_tokens=64)  # several batches
    pairs = [(w.text, c) for w in windows(PASSAGES, window_words=12)
             for c in ("the tower is in paris", "the tower is made of gold and iron")]
    together = v.predict(pairs)
    assert together.shape == (len(pairs), 3) and np.allclose(together.sum(axis=1), 1.0)
    alone = np.vstack([v.predict([p]) for p in pairs])
    assert_float32_close(together, alone)


def test_verify_reads_all_passages_and_keeps_the_evidence_window(verifier):
    out = verifier.verify([(PASSAGES, "The tower is made of gold."), ([""], "Anything.")])
    a, b = out
    assert a.p_supported + a.p_contradicted + a.p_not_mentioned == pytest.approx(1.0)
    ev = a.evidence
    assert PASSAGES[ev.passage][ev.start:ev.end] == ev.text
    assert (b.p_supported, b.p_contradicted, b.p_not_mentioned, b.evidence) == (0.0, 0.0, 1.0, None)


def test_long_passages_are_windowed_not_truncated(verifier):
    long = " ".join(f"The tower is {k} metres tall." for k in range(200))
    (v,) = verifier.verify([([long], "The tower is tall.")])
    assert v.evidence is not None and v.evidence.end <= len(long)
    n_windows = len(windows([long], window_words=verifier.window_words))
    assert n_windows > 20  # every sentence was read, within max_length per pair


def test_a_fp16_checkpoint_loads_on_cpu(tmp_path):
    v = Verifier(build_verifier(tmp_path / "half", dtype="float16"))
    assert v.predict([("a tower", "a tower")]).shape == (1, 3)


def test_missing_pieces_are_named_in_one_line(tmp_path, verifier_dir):
    with pytest.raises(ModelNotFoundError, match="no directory"):
        Verifier(tmp_path / "nothing")
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in verifier_dir.iterdir():
        if f.name != "card.json":
            (broken / f.name).write_bytes(f.read_bytes())
    with pytest.raises(ModelNotFoundError, match="card.json"):
        Verifier(broken)
    (broken / "card.json").write_text(json.dumps({"format": "franq-verifier", "version": 1, "max_length": 0,
                                                  "window_words": 5, "window_overlap_sentences": 1}))
    with pytest.raises(InputError, match="max_length"):
        Verifier(broken)


# ---------------------------------------------------------------------- the backend in the pipeline
@pytest.fixture(scope="module")
def verifier_franq(tiny_lm, verifier_dir):
    return make_franq(tiny_lm, {"faithfulness": {"name": "verifier",
                                                  "verifier": {"model": str(verifier_dir)}}})


def test_pipeline_with_the_verifier_backend_fills_the_three_conditions(verifier_franq):
    result = verifier_franq.score(QUESTION, PASSAGES, ANSWER)
    assert result.stack.faithfulness.startswith("verifier:tiny-verifier") and result.scored
    for c in result.scored:
        assert c.p_faithful + c.p_contradicted + c.p_not_mentioned == pytest.approx(1.0)  # p_faithful: P(supported)
        w = c.evidence_window
        assert PASSAGES[w.passage][w.start:w.end] == w.text
    record = json.loads(json.dumps(result_record("x", result)))
    assert {"p_faithful", "p_contradicted", "p_not_mentioned", "evidence_window"} <= set(record["claims"][0])
    assert "p_supported" not in record["claims"][0]  # it was p_faithful once more
    (back,) = read_results([json.dumps(record)])
    assert back.claims == result.claims


def test_backend_predict_equals_the_conditions_p_supported(verifier_franq):
    backend = verifier_franq.faithfulness
    pairs = [("\n\n".join(PASSAGES), "The tower is in Paris."), (PASSAGES[1], "It holds the Mona Lisa.")]
    assert np.array_equal(backend.predict(pairs), backend.predict_conditions(pairs).p_supported)


def test_other_backends_leave_the_conditions_unknown(tiny_lm):
    result = make_franq(tiny_lm).score(QUESTION, PASSAGES, ANSWER)
    for c in result.scored:
        assert c.p_contradicted is None and c.p_not_mentioned is None and c.evidence_window is None
    # output written before these fields existed still reads back
    record = result_record("x", result)
    for c in record["claims"]:
        for key in ("p_contradicted", "p_not_mentioned", "evidence_window", "p_true_if_contradicted_calibrated",
                    "p_true_if_not_mentioned_calibrated"):
            c.pop(key)
    (back,) = read_results([record])
    assert [c.p_faithful for c in back.claims] == [c.p_faithful for c in result.claims]


def test_verifier_settings_are_checked_before_loading(tiny_lm, verifier_dir):
    with pytest.raises(InputError, match="aggregation"):
        make_franq(tiny_lm, {"faithfulness": {"name": "verifier", "verifier": {"model": str(verifier_dir),
                                                                                "aggregation": "mean"}}})
    with pytest.raises(InputError, match="window_words"):
        make_franq(tiny_lm, {"faithfulness": {"name": "verifier", "verifier": {"window_words": "ten"}}})


def test_the_default_model_is_the_shipped_one(monkeypatch, tmp_path, verifier_dir):
    import franq.verifier.model as model

    monkeypatch.setattr(model, "shipped_verifier_dir", lambda: verifier_dir)
    assert Verifier().path == verifier_dir
    monkeypatch.setattr(model, "shipped_verifier_dir", lambda: tmp_path / "verifier")
    with pytest.raises(ModelNotFoundError, match="shipped verifier"):
        Verifier()


def test_aggregation_names_the_backend(tiny_lm, verifier_dir):
    from franq.faithfulness.verifier import VerifierFaithfulness

    a = VerifierFaithfulness(verifier_dir, aggregation="relevant")
    assert a.name == "verifier:tiny-verifier:relevant"
    assert dataclasses.is_dataclass(a.predict_conditions([("x", "y")]))


def test_passage_titles_reach_the_verifier_only_when_asked(verifier_dir):
    from types import SimpleNamespace

    from franq.faithfulness.verifier import VerifierFaithfulness
    from franq.types import Passage

    ev = [SimpleNamespace(passages=(Passage("Paris is in France.", "https://example.org/page"),),
                          statement="Paris is in France.")]
    pairs = [("Paris is in France.", "Paris is in France.")]
    seen = []
    off = VerifierFaithfulness(verifier_dir)
    on = VerifierFaithfulness(verifier_dir, titles=True)
    for backend in (off, on):
        real = backend.verifier.predict
        backend.verifier.predict = lambda ps, real=real: (seen.append([p for p, _ in ps]), real(ps))[1]
        backend.predict_conditions(pairs, ev)
    assert off.name == "verifier:tiny-verifier:relevant" and on.name.endswith(":titles")
    assert not any(p.startswith("https://") for p in seen[0])
    assert all(p.startswith("https://example.org/page. ") for p in seen[1])


def test_report_panel_shows_the_three_conditions_and_the_evidence_window(verifier_franq, tmp_path):
    from click.testing import CliRunner

    from franq.apps.render import report_html
    from franq.cli import main
    from franq.io import Example

    result = verifier_franq.score(QUESTION, PASSAGES, ANSWER)
    page = report_html([result])
    assert "P_contradicted (verifier)" in page and "P_not_mentioned (verifier)" in page
    assert "Verifier's evidence" in page and 'class="conditions"' in page
    w = result.scored[0].evidence_window
    assert f"characters {w.start}-{w.end}" in page
    path = tmp_path / "scores.jsonl"
    path.write_text(json.dumps(result_record("a", result, Example(QUESTION, result_passages(), ANSWER))) + "\n")
    res = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "r.html"), "--csv",
                                    str(tmp_path / "c.csv")])
    assert res.exit_code == 0, res.output
    assert "Verifier's evidence" in (tmp_path / "r.html").read_text()
    assert "p_contradicted" in (tmp_path / "c.csv").read_text().splitlines()[0]


def test_the_panel_names_a_three_condition_calibrator_s_maps_by_condition(verifier_franq):
    import dataclasses

    from franq.apps.render import report_html

    result = verifier_franq.score(QUESTION, PASSAGES, ANSWER)
    c = dataclasses.replace(result.scored[0], p_true_calibrated=0.3, p_true_if_supported_calibrated=0.9,
                            p_true_if_not_mentioned_calibrated=0.4, p_true_if_contradicted_calibrated=0.0)
    page = report_html([dataclasses.replace(result, claims=(c,))])
    assert "P(true | supported), calibrated" in page and "P(true | not mentioned), calibrated" in page
    assert "P(true | contradicted), calibrated" in page and "P(true | not supported)" not in page
    binary = dataclasses.replace(c, p_true_if_contradicted_calibrated=None, p_true_if_not_mentioned_calibrated=None,
                                 p_true_if_unfaithful_calibrated=0.4)
    page = report_html([dataclasses.replace(result, claims=(binary,))])
    assert "P(true | supported), calibrated" in page and "P(true | not supported), calibrated" in page
    assert "P(true | not mentioned)" not in page


def result_passages():
    from franq.types import Passage

    return tuple(Passage(p) for p in PASSAGES)


def test_the_claim_table_adds_p_contradicted_with_the_verifier(verifier_franq, tiny_lm):
    from franq.cli.table import format_table

    table = format_table(verifier_franq.score(QUESTION, PASSAGES, ANSWER))
    assert "P_contr." in table
    assert "P_contr." not in format_table(make_franq(tiny_lm).score(QUESTION, PASSAGES, ANSWER))
