"""Tiny random checkpoints of the published verifiers, in their own file layouts, built from
transformers configs (no network, a second each): MiniCheck's three kinds (a T5 seq2seq
model; RoBERTa and DeBERTa-v2 two-label classifiers), HHEM-2.1-Open (``config.json`` with
its prompt + ``model.safetensors`` holding ``t5.*``, beside a separate flan-t5 "foundation"
directory with the T5 config and tokenizer) and FactCG (a DeBERTa-v2 two-label classifier).
Word-level tokenizers over :data:`tiny_encoders.WORDS`; the T5 vocabulary is padded to 256
so MiniCheck-Flan-T5's label ids 3 and 209 exist."""
from __future__ import annotations

import json
from pathlib import Path

from tiny_encoders import WORDS, build_tokenizer, tiny_roberta_config

T5_SPECIALS = ["<pad>", "</s>", "<unk>"]
BERT_SPECIALS = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]


def _word_level(vocab_words, specials, post, **tokens):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(specials + vocab_words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=tokens["unk_token"]))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = post(vocab)
    return PreTrainedTokenizerFast(tokenizer_object=tok, **tokens)


def _t5_post(vocab):
    from tokenizers import processors

    return processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                         special_tokens=[("</s>", vocab["</s>"])])


def _bert_post(vocab):
    from tokenizers import processors

    return processors.BertProcessing(("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"]))


def t5_tokenizer():
    """A T5-like tokenizer (``<pad>`` 0, ``</s>`` 1, ``</s>`` after each text) of 256 tokens."""
    words = sorted(set(WORDS)) + ["1", "predict", ":", "?", "premise", "hypothesis", "determine", "if", "given"]
    words = list(dict.fromkeys(words))
    words += [f"filler{i}" for i in range(256 - len(T5_SPECIALS) - len(words))]
    return _word_level(words, T5_SPECIALS, _t5_post, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")


def bert_tokenizer():
    """A DeBERTa-v3-like tokenizer: ``[CLS] text [SEP]``, EOS ``[SEP]`` (as DeBERTa-v3's)."""
    words = sorted(set(WORDS) | {"choose", "your", "answer", "options", "yes", "no", "i", "think", "conclude",
                                "based", "paragraph", "above", "can", "we", '"', "?", ":", "-"})
    return _word_level(words, BERT_SPECIALS, _bert_post, pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
                       unk_token="[UNK]", mask_token="[MASK]", eos_token="[SEP]")


ENCODER_INIT = 0.2
"""The tiny encoders' initializer range: at the default 0.02 a two-layer random encoder's
[CLS] barely depends on the input (every probability 0.50); at 0.2 inputs differ by ~0.1, so
a wrong template or token would show."""


def _spread(linear, std: float) -> None:
    """Re-draw a classifier head so the tiny random model's probabilities spread over (0, 1)
    instead of sitting at 0 / 1 (where a wrong input would go unnoticed)."""
    import torch

    torch.nn.init.normal_(linear.weight, std=std)
    torch.nn.init.zeros_(linear.bias)


def tiny_t5_config(vocab_size: int, **extra):
    from transformers import T5Config

    values = {"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_decoder_layers": 1, "num_heads": 4,
              "decoder_start_token_id": 0, "pad_token_id": 0, "eos_token_id": 1}
    return T5Config(vocab_size=vocab_size, **{**values, **extra})


def _deberta(directory: Path, seed: int) -> Path:
    import torch
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

    tok = bert_tokenizer()
    config = DebertaV2Config(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=64, max_position_embeddings=512, relative_attention=True,
                             position_buckets=16, pos_att_type=["p2c", "c2p"], position_biased_input=False,
                             num_labels=2, pad_token_id=0, initializer_range=ENCODER_INIT)
    torch.manual_seed(seed)
    model = DebertaV2ForSequenceClassification(config)
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def build_minicheck(directory: Path, kind: str, *, seed: int = 0) -> Path:
    """A tiny random MiniCheck model of ``kind`` (flan-t5, roberta or deberta) in ``directory``."""
    import torch
    from transformers import RobertaForSequenceClassification, T5ForConditionalGeneration

    directory = Path(directory)
    if kind == "deberta":
        return _deberta(directory, seed)
    torch.manual_seed(seed)
    if kind == "flan-t5":
        tok = t5_tokenizer()
        T5ForConditionalGeneration(tiny_t5_config(len(tok))).save_pretrained(directory)
    else:
        tok = build_tokenizer()
        model = RobertaForSequenceClassification(tiny_roberta_config(len(tok), max_positions=514, num_labels=2,
                                                                     initializer_range=ENCODER_INIT))
        model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def build_hhem(directory: Path, *, seed: int = 0) -> tuple[Path, Path]:
    """HHEM-2.1-Open's layout: ``directory/hhem`` (config.json naming its foundation and
    prompt, model.safetensors with ``t5.*``) and ``directory/foundation`` (T5 config +
    tokenizer). Returns (hhem, foundation)."""
    import torch
    from safetensors.torch import save_file
    from transformers import T5ForTokenClassification

    from franq.faithfulness.hhem import PROMPT

    hhem, base = Path(directory) / "hhem", Path(directory) / "foundation"
    hhem.mkdir(parents=True, exist_ok=True)
    tok = t5_tokenizer()
    config = tiny_t5_config(len(tok))
    config.save_pretrained(base)
    tok.save_pretrained(base)
    torch.manual_seed(seed)
    config.num_labels = 2
    model = T5ForTokenClassification(config)
    _spread(model.classifier, 0.02)
    state = {f"t5.{k}": v.clone().contiguous() for k, v in model.state_dict().items()
             if k != "transformer.encoder.embed_tokens.weight"}  # tied to shared.weight
    save_file(state, hhem / "model.safetensors")
    (hhem / "config.json").write_text(json.dumps({"architectures": ["HHEMv2ForSequenceClassification"],
                                                  "model_type": "HHEMv2", "foundation": "google/flan-t5-base",
                                                  "prompt": PROMPT}), encoding="utf-8")
    return hhem, base


def build_factcg(directory: Path, *, seed: int = 0) -> Path:
    """A tiny random DeBERTa-v2 two-label classifier in FactCG's checkpoint layout."""
    return _deberta(Path(directory), seed)
