"""Fuzz of franq's boundary: malformed API calls and model paths (config values:
test_config.py; batch records: test_batch_fuzz.py), each with the error it must give (one
line, naming the field), and the odd-but-valid inputs with the outcome they must have (a
warning, ``unaligned``, escaped output). Tiny model and a constant faithfulness backend:
seconds, no real model."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import ConstantFaithfulness, make_franq
from franq.config import FranqConfig
from franq.errors import FranqError, InputError

Q, P, A = "Where is the Eiffel Tower?", ["The Eiffel Tower is in Paris, France."], "The Eiffel Tower is in Paris."


@pytest.fixture(scope="module")
def franq(tiny_lm):
    return make_franq(tiny_lm, faithfulness=ConstantFaithfulness(0.5))


# ---------------------------------------------------------------------------- API calls
# (case, kwargs for Franq.score over the valid Q/P/A, substring of the error)
API_ERRORS = [
    ("question int", {"question": 1}, "'question' must be a string, got int"),
    ("question None", {"question": None}, "'question' must be a string, got NoneType"),
    ("question bytes", {"question": b"Where?"}, "'question' must be a string, got bytes"),
    ("question list", {"question": ["Where?"]}, "'question' must be a string, got list"),
    ("question empty", {"question": ""}, "'question' is empty"),
    ("question blank", {"question": " \n\t"}, "'question' is empty"),
    ("question lone surrogate", {"question": "Where\ud800?"}, "'question' holds an unpaired surrogate"),
    ("answer int", {"answer": 3}, "'answer' must be a string, got int"),
    ("answer None", {"answer": None}, "'answer' must be a string, got NoneType"),
    ("answer dict", {"answer": {"text": A}}, "'answer' must be a string, got dict"),
    ("answer empty", {"answer": ""}, "'answer' is empty"),
    ("answer lone low surrogate", {"answer": "Paris \udc80."}, "'answer' holds an unpaired surrogate"),
    ("answer surrogate at start", {"answer": "\ud83d is it"}, "'answer' holds an unpaired surrogate at character 0"),
    ("passages str", {"passages": "Paris"}, "'passages' must be a list"),
    ("passages bytes", {"passages": b"Paris"}, "'passages' must be a list"),
    ("passages None", {"passages": None}, "'passages' must be a list"),
    ("passages dict", {"passages": {"text": "x"}}, "'passages' must be a list"),
    ("passages int", {"passages": 5}, "'passages' must be a list"),
    ("passage int", {"passages": [1]}, "'passages[0]' must be a string or a"),
    ("passage None", {"passages": ["ok", None]}, "'passages[1]' must be a string or a"),
    ("passage empty", {"passages": [""]}, "'passages[0]' is empty"),
    ("passage surrogate", {"passages": ["ok", "bad \udfff"]}, "'passages[1]' holds an unpaired surrogate"),
    ("passage object no text", {"passages": [{"title": "t"}]}, "'passages[0]' has no 'text'"),
    ("passage text int", {"passages": [{"text": 1}]}, "'passages[0].text' must be a string, got int"),
    ("passage title surrogate", {"passages": [{"text": "x", "title": "\ud800"}]},
     "'passages[0].title' holds an unpaired surrogate"),
    ("passage title int", {"passages": [{"text": "x", "title": 7}]}, "'passages[0].title' must be a string"),
    ("claims str", {"claims": "It is in Paris."}, "'claims' must be a list"),
    ("claims int", {"claims": 1}, "'claims' must be a list"),
    ("claims dict", {"claims": {"text": "x"}}, "'claims' must be a list"),
    ("claim int", {"claims": [1]}, "'claims[0]' must be a string, got int"),
    ("claim empty", {"claims": [""]}, "'claims[0]' is empty"),
    ("claim surrogate", {"claims": ["Paris \ud800"]}, "'claims[0]' holds an unpaired surrogate"),
    ("claim object text int", {"claims": [{"text": 1}]}, "'claims[0].text' must be a string"),
    ("claim object no text", {"claims": [{"is_true": True}]}, "'claims[0]' has no 'text'"),
    ("claim object unknown key", {"claims": [{"text": "x", "score": 1}]}, "'claims[0]' has unknown keys ['score']"),
    ("claim label str", {"claims": [{"text": "x", "is_true": "yes"}]}, "'claims[0].is_true' must be true, false or null"),
    ("claim label int", {"claims": [{"text": "x", "is_faithful": 1}]}, "'claims[0].is_faithful' must be true, false"),
    ("claim synthetic str", {"claims": [{"text": "x", "synthetic": "yes"}]}, "'claims[0].synthetic' must be true, false"),
    ("claim too long", {"claims": ["Paris " * 2000]}, "'claims[0]' is 12000 characters, over the limit of 10000"),
    ("too many claims", {"claims": ["Paris."] * 1001}, "'claims' has 1001 claims, over the limit of 1000"),
    ("mode unknown", {"mode": "medium"}, "medium"),
]


@pytest.mark.parametrize("case", [c[0] for c in API_ERRORS])
def test_api_call_with_bad_input_gives_one_line_error_naming_the_field(franq, case):
    kwargs = next(k for name, k, _ in API_ERRORS if name == case)
    expected = next(e for name, _, e in API_ERRORS if name == case)
    call = {"question": Q, "passages": P, "answer": A, **kwargs}
    with pytest.raises(InputError) as err:
        franq.score(call.pop("question"), call.pop("passages"), call.pop("answer"), **call)
    message = str(err.value)
    assert expected in message and "\n" not in message


def test_claim_sharing_two_of_seven_words_is_unaligned_with_the_reason(franq):
    answer = "The Eiffel Tower is in Paris. It was completed in 1889 for the World Fair."
    res = franq.score(Q, P, answer, claims=["The Eiffel Tower was painted green by famous Impressionist artists"])
    claim = res.claims[0]
    assert claim.status == "unaligned" and claim.p_true_raw is None
    assert "content words of the claim occur in the answer" in claim.claim.note and "not scored" in claim.claim.note


def test_claim_found_in_the_answer_is_still_scored(franq):
    res = franq.score(Q, P, A, claims=["The Eiffel Tower is in Paris."])
    assert res.claims[0].status == "scored"


def test_enormous_repeated_claim_is_not_aligned_and_says_why(franq):
    res = franq.score(Q, P, A, claims=["Paris " * 1500])
    assert res.claims[0].status == "unaligned" and "repeats its words" in res.claims[0].claim.note


def test_empty_claims_list_warns(franq):
    res = franq.score(Q, P, A, claims=[])
    assert res.claims == () and any("empty list" in w for w in res.warnings)


@pytest.mark.parametrize("answer", ["Paris\x00 is here.", "Paris \x1b[31mred\x1b[0m is here.", "Paris\r\nis\x7f here.",
                                    "Paris \u202eereh si\u202c.", "Paris\x0c is here \x85 too."])
def test_control_characters_are_kept_and_scored_without_error(franq, answer):
    res = franq.score(Q, P, answer)
    assert res.answer == answer and res.claims


@pytest.mark.parametrize("answer, n", [("東京は日本の首都です。大阪は大きい都市です。", 2),
                                       ("北京是中国的首都！上海很大？", 2),
                                       ("यह एक वाक्य है। यह दूसरा वाक्य है।", 2),
                                       ("هذه جملة؟ هذه جملة أخرى.", 2)])
def test_sentences_of_other_scripts_are_split(franq, answer, n):
    assert len(franq.score(Q, P, answer).claims) == n


def test_code_fence_and_its_language_tag_are_not_claims(franq):
    answer = "Paris is in France.\n```python\nprint('Paris')\n```\nLyon is in France too."
    res = franq.score(Q, P, answer)
    texts = [(c.claim.text, c.status) for c in res.claims]
    assert ("python", "scored") not in texts and all(t != "python" for t, _ in texts)
    assert ("print('Paris')", "not_check_worthy") in texts
    assert [t for t, s in texts if s == "scored"] == ["Paris is in France.", "Lyon is in France too."]


def test_server_error_echoing_the_authorization_header_is_redacted_everywhere(tiny_lm, monkeypatch):
    from claims.types import Decomposition
    from franq.results import result_record

    monkeypatch.setenv("MY_LLM_KEY", "opaque-credential-9f8e7d6c")
    FranqConfig.from_dict({"decomposer": {"api_key_env": "MY_LLM_KEY"}})  # the config names the key's variable

    class EchoingServer:
        name = "echo"

        def decompose_many(self, answers):
            msg = ("fell back to sentences: 401 {'error': 'bad key', 'headers': {'Authorization': "
                   "'Bearer opaque-credential-9f8e7d6c'}} api_key=opaque-credential-9f8e7d6c")
            return [Decomposition((), warnings=(msg,)) for _ in answers]

    f = make_franq(tiny_lm, decomposer=EchoingServer(), faithfulness=ConstantFaithfulness(0.5))
    res = f.score(Q, P, A)
    line = json.dumps(result_record("x", res))
    for text in (" ".join(res.warnings), line):
        assert "opaque-credential-9f8e7d6c" not in text and "redacted" in text


# ---------------------------------------------------------------------------- model paths
def _load(path=None, **kw):
    from franq.lm.load import load_pretrained

    return load_pretrained(path, device="cpu", **kw)


@pytest.fixture(scope="module")
def pickled_model(tiny_lm_path, tmp_path_factory):
    """A model directory whose weights are a pickle that would run a command when unpickled."""
    import torch

    d = tmp_path_factory.mktemp("pickled")
    for name in os.listdir(tiny_lm_path):
        if name != "model.safetensors":
            shutil.copy(Path(tiny_lm_path) / name, d / name)
    marker = d / "PWNED"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    torch.save({"model.embed_tokens.weight": Evil()}, d / "pytorch_model.bin")
    return d


def _model_dir(tmp_path, tiny_lm_path, drop=(), config_text=None):
    d = tmp_path / "model"
    shutil.copytree(tiny_lm_path, d)
    for name in drop:
        os.remove(d / name)
    if config_text is not None:
        (d / "config.json").write_text(config_text)
    return d


MODEL_CASES = {
    "empty directory": (lambda t, m: _mkdir(t / "empty"), "has no config.json; not a Hugging Face model directory (it is empty)"),
    "absolute path that does not exist": (lambda t, m: "/models/nope", "model: no directory or file at /models/nope"),
    "relative path that does not exist": (lambda t, m: "./models/nope", "model: no directory or file at ./models/nope"),
    "home path that does not exist": (lambda t, m: "~/no-such-model-dir", "model: no directory or file at ~/no-such"),
    "hub name not in the cache": (lambda t, m: "nobody/no-such-model", "from a local path or the local Hugging Face cache"),
    "text file as the model": (lambda t, m: _text(t / "model.txt"), "is not a GGUF file"),
    "directory without a tokenizer": (lambda t, m: _model_dir(t, m, drop=("tokenizer.json", "tokenizer_config.json")),
                                      "has no tokenizer files"),
    "directory without weights": (lambda t, m: _model_dir(t, m, drop=("model.safetensors",)), "has no weights"),
    "broken config.json": (lambda t, m: _model_dir(t, m, config_text="{not json"), "config.json' is not a valid JSON"),
    "config.json of an unknown architecture": (lambda t, m: _model_dir(t, m, config_text='{"model_type": "nope"}'),
                                               "model: cannot read"),
}


def _mkdir(p: Path) -> Path:
    p.mkdir()
    return p


def _text(p: Path) -> Path:
    p.write_text("hello\n")
    return p


@pytest.mark.parametrize("case", sorted(MODEL_CASES))
def test_bad_model_path_gives_one_line_franq_error(tmp_path, tiny_lm_path, case):
    build, expected = MODEL_CASES[case]
    with pytest.raises(FranqError) as err:
        _load(str(build(tmp_path, tiny_lm_path)))
    message = str(err.value)
    assert expected in message and "\n" not in message
    assert "Repo id must be" not in message and "Couldn't instantiate" not in message


@pytest.mark.parametrize("gguf, expected", [("notes.txt", "is not a GGUF file"), ("missing.gguf", "no GGUF file at"),
                                            ("dir.gguf", "is a directory, not a GGUF file")])
def test_bad_gguf_file_gives_one_line_franq_error(tmp_path, gguf, expected):
    (tmp_path / "notes.txt").write_text("not a model")
    (tmp_path / "dir.gguf").mkdir()
    with pytest.raises(FranqError, match=expected):
        _load(None, gguf_file=str(tmp_path / gguf))


def test_pickled_checkpoint_is_refused_by_franq_without_running_it(pickled_model):
    with pytest.raises(FranqError) as err:
        _load(str(pickled_model))
    message = str(err.value)
    assert "pickled checkpoint" in message and "convert it to safetensors" in message
    assert "weights_only" not in message and "\n" not in message
    assert not (pickled_model / "PWNED").exists()


def test_pickled_alignscore_checkpoint_is_refused_by_franq(pickled_model):
    from franq.faithfulness.alignscore import load_state_dict

    with pytest.raises(FranqError, match="pickled checkpoint") as err:
        load_state_dict(pickled_model / "pytorch_model.bin")
    assert "weights_only" not in str(err.value)


def test_many_short_passages_blame_the_passage_headers_not_the_question(franq):
    from franq.errors import ContextOverflowError

    passages = [{"title": f"Title {i}", "text": "x"} for i in range(150)]
    with pytest.raises(ContextOverflowError) as err:
        franq.score(Q, passages, A)
    message = str(err.value)
    assert message.startswith("passages: the headers of the 150 passages") and "give fewer passages" in message


def test_text_that_is_not_english_is_flagged_in_every_result(franq):
    """The API (and so the CLI and batches) says when the text does not look English, since the
    default models are English-only; [model] multilingual = true turns it off."""
    french = {"question": "Quand la tour Eiffel a-t-elle été construite ?",
              "passages": ["La tour Eiffel a été construite de 1887 à 1889 à Paris pour l'Exposition universelle."],
              "answer": "La tour Eiffel a été construite de 1887 à 1889 par les ouvriers de la société de Gustave "
                        "Eiffel."}
    res = franq.score(**french)
    assert any("'answer' looks French" in w and "[model] multilingual" in w for w in res.warnings)
    english = franq.score("When was it built?", ["The tower was built from 1887 to 1889 in Paris for the fair."],
                          "The tower was built from 1887 to 1889.")
    assert not any("English-only" in w for w in english.warnings)
    quiet = make_franq(franq.lm, {"model": {"multilingual": True}}, faithfulness=ConstantFaithfulness(0.5))
    assert not any("English-only" in w for w in quiet.score(**french).warnings)
