"""Per preset, every faithfulness backend and every scorer either runs or is
refused when the config is built, with the key and the reason. Backends that need weights
run with the tiny encoders of tests/tiny_encoders.py; the judge runs on the tiny LM."""
from __future__ import annotations

import dataclasses
import json
import math
from importlib import resources

import pytest

from franq import registry
from franq.config import FranqConfig
from franq.errors import InputError
from franq.io import parse_example
from franq.pipeline import Franq
from franq.presets import FAST_TOP_WINDOWS, PRESETS, presets_for
from franq.presets import check_config

SAMPLE_SCORERS = ("semantic_entropy", "eigval", "degree_matrix", "eccentricity", "lexical_similarity",
                  "semantic_entropy_norm")
ANSWER_SCORERS = ("answer_share", "answer_mass", "answer_consistency", "answer_likelihood")
TEXT_ONLY = {"fast", "fast_short", "chat"}  # no causal LM: no token passes, no samples
REFUSED = {  # (kind, built-in name) -> the presets that cannot run it
    ("faithfulness", "context_pmi"): {"short", "observer", *TEXT_ONLY},
    ("scorers", "claim_prob"): {"short", "observer", "chat"},
    ("scorers", "parametric"): {"short", "observer", "chat"},
    **{("faithfulness", name): {"short", "observer", *TEXT_ONLY} for name in ("lookback", "hidden_probe")},
    **{("scorers", name): {"short", "observer", "chat"} for name in ("rauq", "truth_probe", "ccp")},
    **{("scorers", name): {"long", "probe", "chat"} for name in SAMPLE_SCORERS},
    **{("scorers", name): {"long", "short", "probe", "chat"} for name in ANSWER_SCORERS},
    **{("scorers", name): {"short", "observer", "chat"} for name in ("se_probe", "se_probe_closed")},
}
SCORING = {"short": "in_policy", "observer": "observer", "probe": "probe"}  # uq.short_scoring that runs each short preset
ROLES = ("faith", "unfaith", "extra")
RAW = ("p_faithful", "uq_faith", "uq_unfaith", "p_true_raw")
UQ_PRESETS = [name for name, p in PRESETS.items() if p.uq]  # fast runs no scorer

@pytest.fixture(scope="module")
def example():
    text = resources.files("franq").joinpath("data/example.json").read_text(encoding="utf-8")
    return parse_example(json.loads(text), "bundled example")


@pytest.fixture(scope="module")
def chat_true():
    """The base_url of a local OpenAI-compatible chat server whose first token is "True"."""
    from servers import ChatHandler, chat_server

    class _True(ChatHandler):
        def reply(self, body):
            return "True", {"content": [{"token": "True", "logprob": -0.1, "bytes": None, "top_logprobs": [
                {"token": "True", "logprob": -0.1, "bytes": None}, {"token": "False", "logprob": -2.4, "bytes": None}]}]}

    with chat_server(_True) as srv:
        yield srv.base_url


@pytest.fixture(scope="module")
def encoders(tmp_path_factory):
    """Settings that point alignscore, nli, verifier and the published verifiers at tiny local
    encoders (harmless for the others)."""
    from tiny_encoders import build_alignscore, build_nli, build_verifier
    from tiny_verifiers import build_factcg, build_hhem, build_minicheck

    d = tmp_path_factory.mktemp("encoders")
    ckpt, base = build_alignscore(d / "align")
    hhem, foundation = build_hhem(d / "hhem")
    return {"alignscore": {"checkpoint": str(ckpt), "base_model": str(base)},
            "nli": {"model": str(build_nli(d / "nli"))}, "verifier": {"model": str(build_verifier(d / "verifier"))},
            "minicheck": {"model": str(build_minicheck(d / "minicheck", "roberta")), "kind": "roberta"},
            "hhem": {"model": str(hhem), "foundation": str(foundation)},
            "factcg": {"model": str(build_factcg(d / "factcg"))}}


@pytest.fixture(scope="module")
def tiny_probe(tiny_lm_path, tmp_path_factory):
    """A probe file for the tiny LM (lookback and hidden-state probes on random weights)."""
    import numpy as np

    from franq.internals.probe_file import Probe, ProbeFile

    path = tmp_path_factory.mktemp("probe") / "probe.json"
    rng = np.random.default_rng(0)
    probes = []
    for target in ("is_faithful", "is_true"):
        for spec, n in (({"kind": "lookback"}, 2 * 4), ({"kind": "hidden", "layers": [1]}, 32)):
            probes.append(Probe(target, spec, (0.0,) * n, (1.0,) * n, tuple(rng.normal(size=n) * 0.1), 0.0))
    for kind in ("hidden", "hidden_closed"):  # semantic entropy probes (the probe preset)
        spec = {"kind": kind, "layers": [1], "pool": "last"}
        probes.append(Probe("low_semantic_entropy", spec, (0.0,) * 32, (1.0,) * 32,
                            tuple(rng.normal(size=32) * 0.1), 0.0))
    ProbeFile(str(tiny_lm_path), tuple(probes)).to_json(path)
    return str(path)


def _config(tiny_lm_path, probe: str, preset: str, chat_url: str, **sections) -> dict:
    uq = {"n_samples": 3, "max_sample_tokens": 8, **({"short_scoring": SCORING[preset]} if preset in SCORING else {})}
    mode = "chat" if preset == "chat" else PRESETS[preset].form if PRESETS[preset].uq else "fast"
    if preset == "chat":  # its default scorers ask the local chat server
        table = {"model": "tiny-chat", "base_url": chat_url}
        sections["scorers"] = {"chat_p_true": table, "chat_p_true_rag": table, **sections.get("scorers", {})}
    return {"mode": mode, "model": {"path": str(tiny_lm_path), "device": "cpu", "probe_file": probe},
            "uq": {**uq, **sections.pop("uq", {})}, "calibration": {"calibrator": "none"}, **sections}


def _expect_refused(kind: str, name: str, preset: str) -> bool:
    if (kind, name) in REFUSED:
        return preset in REFUSED[kind, name]
    if name in registry.BUILTIN[kind]:
        return False
    return bool(registry.needs(registry.lookup(kind, name)) - PRESETS[preset].evidence)  # a plugin


def _runs_or_is_refused(data: dict, kind: str, name: str, preset: str, key: str, tiny_lm, example):
    if _expect_refused(kind, name, preset):
        with pytest.raises(InputError) as err:
            check_config(FranqConfig.from_dict(data))
        if kind == "faithfulness":  # one backend for every preset of the mode: the first that refuses it is named
            preset = next(p.name for p in presets_for(data["mode"]) if _expect_refused(kind, name, p.name))
        assert f"config '{key}': '{name}' cannot run in the {preset} preset: it reads" in str(err.value)
        assert "choose another" in str(err.value)
        return None
    franq = Franq(FranqConfig.from_dict(data), tiny_lm)
    if preset == "fast_short":  # mode fast reads a short answer whole
        example = dataclasses.replace(example, answer=" ".join(example.answer.split()[:6]), claims=None)
    [result] = franq.score_many([example])
    assert result.mode == PRESETS[preset].form and result.stack["mode"] == preset and result.scored
    for c in result.scored:
        for field in RAW if PRESETS[preset].uq else ("p_faithful", "p_true_raw"):
            value = getattr(c, field)
            assert math.isfinite(value) and 0.0 <= value <= 1.0, (field, value)
        assert c.p_true_calibrated is None and all(math.isfinite(v) for v in c.signals.values())
    return result


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("name", registry.names("faithfulness"))
def test_every_faithfulness_backend_runs_or_is_refused_at_config_time(name, preset, tiny_lm, tiny_lm_path,
                                                                     tiny_probe, encoders, example, chat_true):
    data = _config(tiny_lm_path, tiny_probe, preset, chat_true, faithfulness={"name": name, **encoders})
    result = _runs_or_is_refused(data, "faithfulness", name, preset, "faithfulness.name", tiny_lm, example)
    if result is not None:
        backend = registry.build("faithfulness", name, FranqConfig.from_dict(data), tiny_lm)
        if not PRESETS[preset].uq and hasattr(backend, "with_top_windows"):  # fast: the verifier's closest windows
            backend = backend.with_top_windows(FAST_TOP_WINDOWS)
        assert result.stack.faithfulness == backend.name == result.stack["faithfulness"]


@pytest.mark.parametrize("preset", UQ_PRESETS)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", registry.names("scorers"))
def test_every_scorer_runs_or_is_refused_at_config_time_in_every_role(name, role, preset, tiny_lm, tiny_lm_path,
                                                                      tiny_probe, encoders, example, chat_true):
    scorers = {role: [name] if role == "extra" else name}
    settings = {"scorers": {"ccp": encoders["nli"]}} if name == "ccp" else {}  # CCP's three-way NLI model
    if name in ("chat_p_true", "chat_p_true_rag"):  # a local chat server that answers True
        settings = {"scorers": {name: {"model": "tiny-chat", "base_url": chat_true}}}
    data = _config(tiny_lm_path, tiny_probe, preset, chat_true, faithfulness={"name": "lexical"},
                   uq={preset: scorers}, **settings)
    result = _runs_or_is_refused(data, "scorers", name, preset, f"uq.{preset}.{role}", tiny_lm, example)
    if result is not None:
        declared = {s.name for s in registry.lookup("scorers", name).signals}
        assert all(declared <= set(c.signals) for c in result.scored)
        if role != "extra":  # the scorer, and the model where it asks a served one (chat_p_true:tiny-chat)
            assert result.stack[f"uq_{role}"].split(":")[0] == name


def test_the_expected_split_between_the_presets():
    """What can run where, stated once: the token-pass components in long form and the
    probe preset, the sample scorers only in the sampling short presets; every other
    built-in everywhere."""
    for kind in ("faithfulness", "scorers"):
        for name in registry.BUILTIN[kind]:
            cls = registry.lookup(kind, name)
            runs_in = {p for p, preset in PRESETS.items() if not registry.needs(cls, FranqConfig()) - preset.evidence
                       and (kind == "faithfulness" or preset.uq)}
            refused = REFUSED.get((kind, name), set())
            assert runs_in == set(PRESETS if kind == "faithfulness" else UQ_PRESETS) - refused, (kind, name, runs_in)
    assert [n for n in registry.BUILTIN["scorers"] if REFUSED.get(("scorers", n)) == {"long", "probe", "chat"}] == list(SAMPLE_SCORERS)


def test_auto_mode_refuses_what_the_short_preset_cannot_run_and_says_why():
    with pytest.raises(InputError, match="'faithfulness.name': 'context_pmi' cannot run in the short preset "
                                         r"\(mode 'auto' scores single short sentences with it\)"):
        check_config(FranqConfig.from_dict({"mode": "auto", "faithfulness": {"name": "context_pmi"}}))
    FranqConfig.from_dict({"mode": "long", "faithfulness": {"name": "context_pmi"}})


def test_a_preset_asked_for_per_call_is_checked_too(tiny_lm, make_franq):
    franq = make_franq(tiny_lm, {"faithfulness": {"name": "context_pmi"}})  # long mode: fine
    with pytest.raises(InputError, match="'context_pmi' cannot run in the observer preset"):  # a given answer
        franq.score("Where is the tower?", ["The tower is in Paris."], "Paris.", mode="short")


def test_components_name_every_stage_of_each_preset(tiny_lm, make_franq):
    franq = make_franq(tiny_lm, {"mode": "auto"})
    long, short = franq.components["long"], franq.components["short"]
    stages = ["claims", "evidence", "uq_faith", "uq_unfaith", "extra", "faithfulness", "mix", "calibrator"]
    assert list(long) == list(short) == stages
    assert (long["claims"], long["evidence"], long["uq_faith"], long["uq_unfaith"]) == \
        ("atomic", "passes", "claim_prob", "parametric")
    assert (short["claims"], short["evidence"], short["uq_faith"], short["uq_unfaith"]) == \
        ("whole answer", "samples", "semantic_entropy", "eigval")
    assert short["extra"] == "degree_matrix, eccentricity, lexical_similarity" and long["extra"] == "-"
    assert long["faithfulness"] == short["faithfulness"] == "lexical-v1"
    assert long["calibrator"] == short["calibrator"] == "none"
    observer = franq.components["observer"]
    assert (observer["claims"], observer["uq_faith"], observer["uq_unfaith"]) == \
        ("whole answer", "answer_share", "answer_consistency")


def test_a_backend_passed_in_is_checked_against_the_preset_too(tiny_lm, make_franq):
    from franq.faithfulness.context_pmi import ContextPMIFaithfulness

    with pytest.raises(InputError, match=r"faithfulness 'context-pmi-v1' cannot run in the short preset: "
                                         r"it reads \['passes'\]"):
        make_franq(tiny_lm, {"mode": "short"}, faithfulness=ContextPMIFaithfulness())
    franq = make_franq(tiny_lm, faithfulness=ContextPMIFaithfulness())  # long: fine, until short is asked for
    with pytest.raises(InputError, match="cannot run in the observer preset"):
        franq.score("Where is the tower?", ["The tower is in Paris."], "Paris.", mode="short")


def test_an_extra_scorer_that_repeats_uq_faith_or_unfaith_runs_once(tiny_lm):
    config = FranqConfig.from_dict({"mode": "short", "uq": {"short": {"extra": ["eigval", "eigval", "eccentricity"]}}})
    p = Franq(config, tiny_lm).preset("short")
    assert [s.name for s in p.extra] == ["eccentricity"] and p.uq_unfaith.name == "eigval"
