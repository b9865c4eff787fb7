"""The slot check (franq.verifier.slots): slot extraction, alignment against passage
sentences, and the combiner's fit / save / load / apply, on tiny inputs."""
import json

import numpy as np
import pytest

from franq.errors import InputError
from franq.verifier.combiner import (
    COMBINER_FILE,
    SlotCombiner,
    fit_combiner,
    load_combiner,
    recheck,
)
from franq.verifier.slots import FEATURES, extract, features, speaking_sentences


def _f(claim, passages):
    return dict(zip(FEATURES, features(claim, passages)))


def test_numbers_with_units_words_and_money():
    s = extract("Retries run for 3 weeks, thirty seconds apart, up to $2 million or 40% of 1,200 requests.")
    assert (3 * 604800.0, "time") in s.numbers
    assert (30.0, "time") in s.numbers
    assert (2e6, "money") in s.numbers and (40.0, "percent") in s.numbers
    assert (1200.0, "request") in s.numbers
    assert extract("two hundred pages").numbers == [(200.0, "page")]


def test_years_versions_days_and_entities():
    s = extract("Caesar was killed on 15 March 44 BC; Python 3.12.0 came out in October 2023.")
    assert s.years == [-44, 2023]
    assert s.versions == ["3.12.0"]
    assert s.numbers == []  # "15 March" is a day of the month, not a quantity
    assert "caesar" in s.entities and "python" in s.entities
    code = extract("Pass --include-untracked to json.dumps() with 'eager' (#412).")
    assert {"--include-untracked", "json.dumps()", "eager", "412"} <= set(code.entities)


def test_negation_comparatives_and_quantifiers():
    s = extract("The task is never cancelled and K2 is smaller than Everest in all cases.")
    assert s.negations == 1
    assert s.comparatives == {"smaller"}
    assert "all" in s.quantifiers
    assert extract("It doesn't raise.").negations == 1


def test_speaking_sentences_pick_the_sentence_about_the_claim():
    passage = "The bridge opened in 1932. Its main span is 503 metres long. Tolls were removed in 1988."
    got = speaking_sentences("The main span of the bridge is 530 metres long.", [passage])
    assert got and "main span" in got[0][1]
    assert speaking_sentences("Bananas are yellow.", [passage]) == []


def test_aligned_slots_match_and_mismatch():
    passage = ["The default grace period is 30 seconds. The kubelet then sends SIGKILL."]
    assert _f("The default grace period is 30 seconds.", passage)["number_mismatch"] == 0
    wrong = _f("The default grace period is 3 seconds.", passage)
    assert wrong["number_mismatch"] == 1 and wrong["evidence"] > 0
    unit = _f("The default grace period is 30 minutes.", passage)
    assert unit["number_mismatch"] == 1  # another unit is another quantity
    years = ["Apollo 11 landed on the Moon on 20 July 1969, and Armstrong stepped out first."]
    assert _f("Apollo 11 landed on the Moon in 1968.", years)["year_mismatch"] == 1
    assert _f("Apollo 11 landed on the Moon in 1969.", years)["year_mismatch"] == 0


def test_a_number_in_the_sentence_that_goes_on_about_the_speaking_one_is_aligned():
    """ "Its elevation of 8,849 metres" states the number of the sentence before it, which is
    the one that speaks about the claim (it names the mountain)."""
    everest = [("Mount Everest is Earth's highest mountain, located in the Himalayas. Its elevation of 8,849 metres "
               "was established in 2020. Tourism brings 3,200 visitors a year.")]
    assert _f("Mount Everest is 3,200 metres tall.", everest)["number_mismatch"] == 1
    assert _f("Mount Everest is 8,849 metres tall.", everest)["number_mismatch"] == 0
    assert _f("Mount Everest was measured in 1999.", everest)["year_mismatch"] == 1
    other = ["Mount Everest is Earth's highest mountain, located in the Himalayas. The Alps rise to 4,808 metres."]
    assert _f("Mount Everest is 8,849 metres tall.", other)["number_mismatch"] == 0  # no pronoun: another topic


def test_entity_negation_comparative_scope_and_order():
    moon = ["Armstrong became the first person to step onto the Moon, and Aldrin followed him."]
    assert _f("Collins became the first person to step onto the Moon.", moon)["entity_absent"] == 1
    neg = ["The -a option does not preserve hard links."]
    assert _f("The -a option preserves hard links.", neg)["negation_mismatch"] == 1
    assert _f("The -a option does not preserve hard links.", neg)["negation_mismatch"] == 0
    cmp_ = ["K2 is smaller than Everest, the highest mountain."]
    assert _f("K2 is larger than Everest.", cmp_)["comparative_mismatch"] == 1
    scope = ["A Retry-After header may be included in a 429 response."]
    assert _f("A 429 response must always include a Retry-After header.", scope)["scope_mismatch"] == 1
    order = ["The default line length was raised from 88 to 100."]
    assert _f("The default line length went from 100 to 88.", order)["order_swap"] == 1
    assert _f("The default line length went from 88 to 100.", order)["order_swap"] == 0


def test_unrelated_claims_give_no_evidence():
    got = _f("Git was created by Linus Torvalds in 2005.", ["git stash saves your local modifications away."])
    assert got["relevance"] == 0 and got["evidence"] == 0


def _toy_rows():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 30)
    p3 = np.full((90, 3), 0.1)
    p3[np.arange(90), y] = 0.8
    p3 = np.clip(p3 + rng.uniform(0, 0.3, p3.shape), 0, None)
    p3 /= p3.sum(1, keepdims=True)
    feats = np.zeros((90, len(FEATURES)))
    feats[y == 1, FEATURES.index("number_mismatch")] = 1
    return p3, feats, y


def test_combiner_fit_save_load_apply(tmp_path):
    p3, feats, y = _toy_rows()
    comb = fit_combiner(p3, feats, y, meta={"verifier": "verifier:toy"})
    out = comb.apply(p3, feats)
    assert out.shape == (90, 3) and np.allclose(out.sum(1), 1)
    assert np.mean(out.argmax(1) == y) > 0.9
    none = np.zeros((1, len(FEATURES)))  # no mismatch: the verifier's probabilities as they are
    assert np.allclose(comb.apply(p3[:1], none), p3[:1])
    assert comb.weights[0].tolist() == [0.0] * comb.weights.shape[1]
    path = tmp_path / COMBINER_FILE
    path.write_text(comb.to_json())
    again = SlotCombiner.load(path)
    assert np.allclose(again.apply(p3, feats), out, atol=1e-4)

    class Toy:
        name = "verifier:toy"
        path = tmp_path
    toy = Toy()
    assert load_combiner(toy).meta["verifier"] == "verifier:toy"
    toy.name = "verifier:other"
    with pytest.raises(InputError, match="fitted for verifier:toy"):
        load_combiner(toy)
    with pytest.raises(InputError, match="no combiner"):
        load_combiner(toy, str(tmp_path / "missing.json"))


def test_a_refit_combiner_names_its_version_in_the_backends_name(tmp_path, verifier_dir):
    """A refit's output must not pass for the last fit's: calibrators fitted for a stack, and
    caches keyed by the backend's name, tell them apart by the version the name carries."""
    import shutil

    from franq.faithfulness.verifier import VerifierFaithfulness
    from franq.verifier import Verifier
    from franq.verifier.combiner import next_version

    p3, feats, y = _toy_rows()
    folder = tmp_path / "verifier"
    shutil.copytree(verifier_dir, folder)
    path = folder / COMBINER_FILE
    assert next_version(path) == 1  # a new file
    name = Verifier(folder).name
    path.write_text(fit_combiner(p3, feats, y, meta={"verifier": name}).to_json())
    first = VerifierFaithfulness(str(folder))
    assert first.slots.version == 1 and first.name.endswith(":slots")  # files without a version: the first fit
    assert next_version(path) == 2
    path.write_text(fit_combiner(p3, feats, y, meta={"verifier": name, "version": 2}).to_json())
    second = VerifierFaithfulness(str(folder))
    assert second.name == first.name + "2" and second.name.endswith(":slots2")
    for bad in (0, "2", True, 1.5):
        path.write_text(fit_combiner(p3, feats, y, meta={"verifier": name, "version": bad}).to_json())
        with pytest.raises(InputError, match="version must be an integer >= 1"):
            SlotCombiner.load(path)


def test_combiner_refuses_other_inputs(tmp_path):
    p3, feats, y = _toy_rows()
    data = json.loads(fit_combiner(p3, feats, y).to_json())
    data["inputs"] = ["relevance"]
    (tmp_path / "c.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="inputs"):
        SlotCombiner.load(tmp_path / "c.json")


def test_recheck_keeps_claims_without_passages():
    p3, feats, y = _toy_rows()
    comb = fit_combiner(p3, feats, y)
    verdicts = np.array([[0.7, 0.2, 0.1], [0.0, 0.0, 1.0]])
    items = [(["The grace period is 30 seconds."], "The grace period is 3 seconds."), ([""], "Anything.")]
    out = recheck(comb, verdicts, items)
    assert np.allclose(out[1], [0.0, 0.0, 1.0])
    assert np.isclose(out[0].sum(), 1.0)


def test_bias_is_fitted_saved_and_optional_in_old_files(tmp_path):
    p3, feats, y = _toy_rows()
    # every row's verifier says "contradicted" where the label is "not mentioned": a bias moves them
    p3 = p3.copy()
    nm = y == 2
    p3[nm] = [0.1, 0.6, 0.3]
    comb = fit_combiner(p3, feats, y, bias=True, sample_weight=np.ones(len(y)))
    assert comb.bias[0] == 0.0 and comb.bias[2] > comb.bias[1]
    assert np.mean(comb.apply(p3[nm], feats[nm]).argmax(1) == 2) > 0.9
    assert np.mean(fit_combiner(p3, feats, y).apply(p3[nm], feats[nm]).argmax(1) == 2) < 0.1  # no bias: stays C
    path = tmp_path / "c.json"
    path.write_text(comb.to_json())
    assert np.allclose(SlotCombiner.load(path).bias, comb.bias, atol=1e-6)
    data = json.loads(comb.to_json())
    del data["bias"]  # a combiner written before the bias: b = 0
    path.write_text(json.dumps(data))
    old = SlotCombiner.load(path)
    assert old.bias.tolist() == [0.0, 0.0, 0.0]
    assert np.allclose(old.apply(p3[:1], np.zeros((1, len(FEATURES)))), p3[:1])
    data["bias"] = [0.0, "x", 1.0]
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="bias"):
        SlotCombiner.load(path)


def test_slot_check_unset_is_on_only_with_a_combiner_fitted_for_the_verifier(tmp_path):
    from franq.verifier.combiner import combiner_for

    p3, feats, y = _toy_rows()

    class Toy:
        name = "verifier:toy"
        path = tmp_path
    toy = Toy()
    assert combiner_for(toy, None) is None  # no file: off
    with pytest.raises(InputError, match="no combiner"):
        combiner_for(toy, True)  # asked for: required
    (tmp_path / COMBINER_FILE).write_text(fit_combiner(p3, feats, y, meta={"verifier": "verifier:toy"}).to_json())
    assert combiner_for(toy, None) is not None and combiner_for(toy, True) is not None
    assert combiner_for(toy, False) is None
    toy.name = "verifier:retrained"  # a combiner of another verifier is never used unasked
    assert combiner_for(toy, None) is None
    with pytest.raises(InputError, match="fitted for verifier:toy"):
        combiner_for(toy, True)


def test_the_shipped_verifier_reads_with_its_slot_check_by_default():
    from franq.faithfulness.verifier import VerifierFaithfulness
    from franq.verifier import shipped_verifier_dir

    if not (shipped_verifier_dir() / COMBINER_FILE).is_file():
        pytest.skip("no shipped verifier")
    on = VerifierFaithfulness()
    assert on.name.endswith(":slots") and on.slots.bias[1] < 0 < on.slots.bias[2]
    assert not VerifierFaithfulness(slot_check=False).name.endswith(":slots")
