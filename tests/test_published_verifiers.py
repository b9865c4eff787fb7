"""The published verifiers as faithfulness backends (issue 46, item 5): MiniCheck's three
kinds, HHEM-2.1-Open and FactCG on tiny random checkpoints of the same architectures and
file layouts (tests/tiny_verifiers.py). Each backend's value is checked against the
published inference written out here from the upstream code (template, tokenization, label
reading, max over chunks), its chunking against the upstream rules, batching against one
input at a time; then config wiring, one-line errors for what is missing, and `franq fit
calibrator` for each backend through a config file."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conftest import assert_float32_close, franq_config, make_franq
from franq import registry
from franq.cli import main
from franq.errors import FranqError, InputError, ModelNotFoundError
from franq.faithfulness import factcg, minicheck
from franq.faithfulness.base import has_conditions
from franq.faithfulness.factcg import FactCGFaithfulness, chunk_document
from franq.faithfulness.hhem import HHEMFaithfulness
from franq.faithfulness.minicheck import MiniCheckFaithfulness, pack, sentences_with_newlines
from franq.presets import check_config
from tiny_verifiers import build_factcg, build_hhem, build_minicheck

CONTEXT = ("The Eiffel Tower is in Paris. It was built from 1887 to 1889 by the engineer Gustave Eiffel.\n\n"
           "Paris is the capital of France. The Louvre is the largest art museum in Europe.")
CLAIMS = ["the tower is in paris", "the tower was built in 1900", "the louvre is a museum in paris",
          "water boils at 100 degrees celsius"]
BACKENDS = ("minicheck-flan-t5", "minicheck-roberta", "minicheck-deberta", "hhem", "factcg")
FACTCG_TEMPLATE = ("{}\n\nChoose your answer: based on the paragraph above can we conclude that \"{}\"?\n\n"
                   "OPTIONS:\n- Yes\n- No\nI think the answer is ")
HHEM_PROMPT = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {}\n\nHypothesis: {}"


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    torch.set_num_threads(1)
    d = tmp_path_factory.mktemp("published")
    out = {f"minicheck-{k}": build_minicheck(d / f"minicheck-{k}", k, seed=i)
           for i, k in enumerate(minicheck.KINDS)}
    out["hhem"], out["foundation"] = build_hhem(d / "hhem-2.1", seed=3)
    out["factcg"] = build_factcg(d / "factcg", seed=4)
    return out


def backend(dirs, name, **kw):
    kw.setdefault("device", "cpu")  # the written-out inference below runs on the CPU
    if name.startswith("minicheck"):
        return MiniCheckFaithfulness(dirs[name], **kw)
    if name == "hhem":
        return HHEMFaithfulness(dirs["hhem"], foundation=dirs["foundation"], **kw)
    return FactCGFaithfulness(dirs["factcg"], **kw)


@pytest.fixture(scope="module")
def loaded(dirs):
    return {name: backend(dirs, name) for name in BACKENDS}


# --------------------------------------------------------------- the published inference, written out
def published_minicheck(b, chunk: str, claim: str) -> float:
    """minicheck/inference.py: Inferencer.batch_tokenize + inference for one chunk."""
    tok, kind = b.tokenizer, b.kind
    text = tok.eos_token.join([chunk, claim])
    if kind == "flan-t5":
        enc = tok(["predict: " + text], max_length=2048, truncation=True, padding=True, return_tensors="pt")
        with torch.no_grad():
            logits = b.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                             decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits.squeeze(1)
        return float(torch.softmax(logits[:, torch.tensor([3, 209])], dim=-1)[0, 1])
    enc = tok([text], max_length=512 if kind == "roberta" else 2048, truncation=True, padding=True,
              return_tensors="pt")
    with torch.no_grad():
        return float(torch.softmax(b.model(**enc).logits, dim=1)[0, 1])


def published_hhem(b, premise: str, hypothesis: str) -> float:
    """modeling_hhem_v2.py: HHEMv2ForSequenceClassification.predict for one pair."""
    enc = b.tokenizer([HHEM_PROMPT.format(premise, hypothesis)], return_tensors="pt", padding=True)
    with torch.no_grad():
        logits = b.model(**enc).logits[:, 0, :]
    return float(torch.softmax(logits, dim=-1)[0, 1])


def published_factcg(b, chunk: str, claim: str) -> float:
    """factcg/inference.py: Inferencer.tokenize + inference (Hugging Face checkpoint) for one chunk."""
    b.tokenizer.pad_token = b.tokenizer.eos_token
    enc = b.tokenizer([FACTCG_TEMPLATE.format(chunk, claim)], max_length=2048, truncation="only_first",
                      padding="longest", return_tensors="pt")
    with torch.no_grad():
        return float(torch.softmax(b.model(**enc).logits, dim=-1)[0, 1])


def published(b, name: str, chunks: list[str], claim: str) -> float:
    one = published_minicheck if name.startswith("minicheck") else published_factcg
    return max(one(b, c, claim) for c in chunks)


@pytest.mark.parametrize("name", BACKENDS)
def test_each_backend_gives_the_published_score_of_each_claim(loaded, name):
    b = loaded[name]
    got = b.predict([(CONTEXT, c) for c in CLAIMS])
    if name == "hhem":
        want = [published_hhem(b, CONTEXT, c) for c in CLAIMS]
    else:
        assert b.chunks(CONTEXT) and all(b.chunks(CONTEXT))
        want = [published(b, name, b.chunks(CONTEXT), c) for c in CLAIMS]
    assert got.shape == (len(CLAIMS),) and ((got > 0) & (got < 1)).all()
    assert_float32_close(got, want)
    assert np.ptp(got) > 1e-3  # the tiny models tell the claims apart: a wrong input would show
    assert not has_conditions(b)  # binary models: P_supported only


@pytest.mark.parametrize("name", BACKENDS)
def test_batched_scores_equal_one_at_a_time_and_duplicates_are_scored_once(loaded, name):
    b = loaded[name]
    pairs = [(CONTEXT, c) for c in CLAIMS] + [("Paris is the capital of France.", CLAIMS[0]), (CONTEXT, CLAIMS[0])]
    together = b.predict(pairs)
    assert_float32_close(together, [b.predict([p])[0] for p in pairs])
    assert together[0] == together[-1]
    assert b.predict([]).shape == (0,)


def test_minicheck_long_document_is_chunked_and_scored_by_its_best_chunk(dirs):
    b = backend(dirs, "minicheck-flan-t5", chunk_size=14)  # the longest sentence: 13 words
    chunks = b.chunks(CONTEXT)
    assert len(chunks) > 1 and all(len(c.split()) <= 14 for c in chunks)
    assert " ".join(chunks).split() == CONTEXT.split()  # every word kept, in order
    got = b.predict([(CONTEXT, c) for c in CLAIMS])
    assert_float32_close(got, [published(b, "minicheck-flan-t5", chunks, c) for c in CLAIMS])
    roberta = backend(dirs, "minicheck-roberta", chunk_size=16)  # tokens of its tokenizer
    assert len(roberta.chunks(CONTEXT)) > 1
    assert all(len(roberta.tokenizer(c, add_special_tokens=False)["input_ids"]) <= 16 for c in roberta.chunks(CONTEXT))


def test_minicheck_packing_follows_the_published_rules():
    def words(s):
        return len(s.split())

    sentences = ["One two three.", "\n", "Four five.", "Six seven eight nine."]
    # greedy, a sentence that would overflow starts the next chunk, " \n " becomes a newline
    assert pack(sentences, 5, words) == ["One two three.\nFour five.", "Six seven eight nine."]
    assert pack(["a b c d e f"], 3, words) == ["a b c d e f"]  # an overlong first sentence: its own chunk
    assert pack(["", "\n"], 3, words) == []  # a blank document: no chunk
    assert sentences_with_newlines("A b.\nC d.") == ["A b.", "\n", "C d."]


def test_factcg_chunking_follows_chunking_src(monkeypatch):
    monkeypatch.setattr(factcg, "sent_tokenize", lambda t: [s.strip() + "." for s in t.split(".") if s.strip()])
    monkeypatch.setattr(factcg, "word_tokenize", lambda t: t.replace(".", " .").split())
    assert chunk_document("A b c. D e. F g h i.", max_words=7) == ["A b c.\nD e.", "F g h i."]
    # a first sentence over the limit leaves an empty first chunk, as chunking_src does
    assert chunk_document("A b c d e f g. H.", max_words=3) == ["", "A b c d e f g.", "H."]
    assert chunk_document("   ", max_words=3) == []


def test_factcg_scores_a_document_over_550_words_by_its_best_chunk(loaded):
    b = loaded["factcg"]
    sentence = "The Eiffel Tower in Paris was built from 1887 to 1889 by Gustave Eiffel."
    document = " ".join([sentence] * 50)  # 15 NLTK tokens each: 750
    chunks = b.chunks(document)
    assert len(chunks) == 2 and chunks[0].count("\n") == 35  # 36 sentences (540 tokens) <= 550
    got = b.predict([(document, CLAIMS[0])])
    assert_float32_close(got, [published(b, "factcg", chunks, CLAIMS[0])])


def test_hhem_reads_the_leading_pad_token_and_its_config_prompt(loaded, dirs, tmp_path):
    b = loaded["hhem"]
    assert b.tokenizer(HHEM_PROMPT.format("x", "y"))["input_ids"][0] == b.tokenizer.pad_token_id == 0
    assert b.prompt.format(text1="x", text2="y") == HHEM_PROMPT.format("x", "y")  # config.json's
    # batches by padded tokens: a budget smaller than any input scores each alone, same values
    tight = backend(dirs, "hhem", batch_tokens=1)
    pairs = [(CONTEXT, c) for c in CLAIMS]
    assert_float32_close(tight.predict(pairs), b.predict(pairs))


# ------------------------------------------------------------------------------- config and errors
def test_config_builds_each_backend_by_name(dirs):
    tables = {"minicheck": {"model": str(dirs["minicheck-deberta"]), "chunk_size": 50},
              "hhem": {"model": str(dirs["hhem"]), "foundation": str(dirs["foundation"])},
              "factcg": {"model": str(dirs["factcg"]), "batch_size": 4}}
    for name, table in tables.items():
        config = franq_config({"faithfulness": {"name": name, name: table}})
        b = registry.build("faithfulness", name, config, None)
        assert b.name.startswith({"minicheck": "minicheck-deberta:", "hhem": "hhem-2.1-open:",
                                  "factcg": "factcg:"}[name])
    assert b.batch_size == 4


@pytest.mark.parametrize("name, table, match", [
    ("minicheck", {}, "'faithfulness.minicheck.model': required"),
    ("hhem", {}, "'faithfulness.hhem.model': required"),
    ("factcg", {}, "'faithfulness.factcg.model': required"),
    ("minicheck", {"model": "/m", "kind": "bert"}, "'faithfulness.minicheck.kind': expected one of"),
    ("minicheck", {"model": "/m", "chunk_size": 0}, "'faithfulness.minicheck.chunk_size': expected a positive"),
    ("hhem", {"model": "/m", "batch_tokens": 0}, "'faithfulness.hhem.batch_tokens': expected a positive"),
    ("factcg", {"model": "/m", "batch_size": -1}, "'faithfulness.factcg.batch_size': expected a positive"),
])
def test_config_refuses_bad_settings_naming_the_key(name, table, match):
    with pytest.raises(InputError, match=match):
        check_config(franq_config({"faithfulness": {"name": name, name: table}}))


def one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_a_missing_path_or_file_is_one_line_naming_what_is_missing(dirs, tmp_path):
    with pytest.raises(ModelNotFoundError, match="'faithfulness.minicheck.model': no directory at") as e:
        MiniCheckFaithfulness(tmp_path / "nowhere")
    one_line(e)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelNotFoundError, match="has no config.json and no tokenizer files .* and no weights") as e:
        FactCGFaithfulness(empty)
    one_line(e)
    no_weights = tmp_path / "no-weights"
    no_weights.mkdir()
    for f in dirs["factcg"].iterdir():
        if not f.name.endswith(".safetensors"):
            (no_weights / f.name).write_bytes(f.read_bytes())
    with pytest.raises(ModelNotFoundError, match=r"'faithfulness.factcg.model': .* has no weights") as e:
        FactCGFaithfulness(no_weights)
    one_line(e)
    with pytest.raises(ModelNotFoundError, match="'faithfulness.hhem.foundation': required: .*flan-t5-base") as e:
        HHEMFaithfulness(dirs["hhem"])  # HHEM's own directory holds no T5 config or tokenizer
    one_line(e)
    config_only = tmp_path / "config-only"
    config_only.mkdir()
    (config_only / "config.json").write_bytes((dirs["foundation"] / "config.json").read_bytes())
    with pytest.raises(ModelNotFoundError, match="'faithfulness.hhem.foundation': .* has no tokenizer files") as e:
        HHEMFaithfulness(dirs["hhem"], foundation=config_only)
    one_line(e)


def test_a_model_of_another_kind_or_layout_is_refused_in_one_line(dirs, tmp_path, verifier_dir):
    from tiny_verifiers import t5_tokenizer, tiny_t5_config

    with pytest.raises(InputError, match="'faithfulness.hhem.foundation': .* holds a 'deberta-v2' config") as e:
        HHEMFaithfulness(dirs["hhem"], foundation=dirs["factcg"])
    one_line(e)
    wider = tmp_path / "flan-t5-wider"  # a T5 of another size than the one the weights were fitted on
    tiny_t5_config(256, d_model=48).save_pretrained(wider)
    t5_tokenizer().save_pretrained(wider)
    with pytest.raises(FranqError, match="'faithfulness.hhem.model': its tensors do not fit the T5 config") as e:
        HHEMFaithfulness(dirs["hhem"], foundation=wider)
    one_line(e)
    with pytest.raises(FranqError, match="'faithfulness.hhem.model': .* is not an HHEM-2.1 checkpoint") as e:
        HHEMFaithfulness(dirs["minicheck-flan-t5"], foundation=dirs["foundation"])  # a seq2seq model's tensors
    one_line(e)
    with pytest.raises(InputError, match="'faithfulness.minicheck.kind': .* holds a 'bert' model") as e:
        MiniCheckFaithfulness(verifier_dir)  # franq's own verifier: a BERT
    one_line(e)
    with pytest.raises(InputError, match="'faithfulness.minicheck.model': .* tokenizer has no EOS token") as e:
        MiniCheckFaithfulness(verifier_dir, kind="roberta")
    one_line(e)


# ------------------------------------------------------------------------------ fit calibrator
FACT = ("Where is the Eiffel Tower?", "The Eiffel Tower is in Paris. It was built in 1900.")
PASSAGE = ("The Eiffel Tower is a wrought iron lattice tower in Paris, France, built from 1887 to 1889. "
           "Gustave Eiffel was a French engineer. Paris is the capital of France.")


@pytest.mark.parametrize("name", BACKENDS)
def test_fit_calibrator_for_each_backend_from_labelled_data_via_config(dirs, tmp_path, tiny_lm_path, tiny_lm, name):
    section = name.split("-")[0]
    table = {"model": str(dirs[name]), "device": "cpu"}
    if name == "hhem":
        table["foundation"] = str(dirs["foundation"])
    lines = [f'[faithfulness]\nname = "{section}"\n[faithfulness.{section}]\n']
    lines += [f'{k} = "{v}"\n' for k, v in table.items()]
    (tmp_path / "franq.toml").write_text("".join(lines), encoding="utf-8")
    from test_calibrate_cli import _raw_examples  # 5 facts x 4: 20 labelled answers, 40 claims

    res = CliRunner().invoke(main, ["fit", "calibrator", str(_raw_examples(tmp_path / "train.jsonl", n_repeat=4)),
                                    "-o", str(tmp_path / "cal.json"), "--model", str(tiny_lm_path),
                                    "--config", str(tmp_path / "franq.toml"), "--min-per-condition", "2",
                                    "--folds", "2"])
    assert res.exit_code == 0, res.output
    cal = json.loads((tmp_path / "cal.json").read_text())
    faithfulness = cal["fitted_for"]["faithfulness"]
    assert faithfulness == backend(dirs, name).name
    scored = [json.loads(x) for x in (tmp_path / "cal.scored.jsonl").read_text(encoding="utf-8").splitlines()]
    p = [c["p_faithful"] for r in scored for c in r["claims"]]
    assert len(p) == 40 and len(set(p)) > 1 and all(c["p_contradicted"] is None for r in scored for c in r["claims"])
    # the pipeline finds and applies it for the same backend
    franq = make_franq(tiny_lm, {"faithfulness": {"name": section, section: table},
                                 "calibration": {"calibrator": str(tmp_path / "cal.json")}})
    result = franq.score(FACT[0], [PASSAGE], FACT[1])
    assert result.calibration and all(c.p_true_calibrated is not None for c in result.scored)


def test_the_cli_refuses_a_backend_directory_without_weights_in_one_line(dirs, tmp_path, tiny_lm_path):
    from conftest import GOOD

    partial = tmp_path / "MiniCheck-Flan-T5-Large"
    partial.mkdir()
    for f in dirs["minicheck-flan-t5"].iterdir():
        if not f.name.endswith(".safetensors"):
            (partial / f.name).write_bytes(f.read_bytes())
    (tmp_path / "in.jsonl").write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    for model, said in ((partial, "has no weights (model.safetensors or pytorch_model.bin)"),
                        (tmp_path / "nowhere", "no file or directory at")):
        (tmp_path / "franq.toml").write_text(f'[faithfulness]\nname = "minicheck"\n[faithfulness.minicheck]\n'
                                             f'model = "{model}"\n', encoding="utf-8")
        res = CliRunner().invoke(main, ["score", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"),
                                        "--model", str(tiny_lm_path), "--config", str(tmp_path / "franq.toml"),
                                        "--calibrator", "none"])
        assert res.exit_code != 0 and "Traceback" not in res.output, res.output
        error = [line for line in res.output.splitlines() if "Error" in line]
        assert len(error) == 1 and said in error[0] and "minicheck" in error[0], res.output


def test_sentences_and_words_as_nltk_splits_them_with_or_without_its_punkt_model():
    from franq.faithfulness.published import sent_tokenize, word_tokenize

    assert sent_tokenize("The tower is tall. Paris is in France.") == ["The tower is tall.", "Paris is in France."]
    assert word_tokenize('He said "no." It was built in 1889.') == ["He", "said", "``", "no", ".", "''", "It", "was",
                                                                    "built", "in", "1889", "."]


def test_hhem_loads_a_checkpoint_with_the_tied_embedding_stored_and_a_merged_directory(loaded, dirs, tmp_path):
    from safetensors.torch import load_file, save_file

    state = load_file(dirs["hhem"] / "model.safetensors")
    state["t5.transformer.encoder.embed_tokens.weight"] = state["t5.transformer.shared.weight"].clone()
    stored = tmp_path / "stored"
    stored.mkdir()
    save_file(state, stored / "model.safetensors")
    (stored / "config.json").write_bytes((dirs["hhem"] / "config.json").read_bytes())
    pairs = [(CONTEXT, c) for c in CLAIMS]
    want = loaded["hhem"].predict(pairs)
    assert_float32_close(HHEMFaithfulness(stored, foundation=dirs["foundation"], device="cpu").predict(pairs), want)
    merged = tmp_path / "merged"  # the foundation's config and tokenizer beside HHEM's weights: no foundation
    merged.mkdir()
    for f in dirs["foundation"].iterdir():
        (merged / f.name).write_bytes(f.read_bytes())
    (merged / "model.safetensors").write_bytes((dirs["hhem"] / "model.safetensors").read_bytes())
    assert_float32_close(HHEMFaithfulness(merged, device="cpu").predict(pairs), want)
