"""Tiny random RoBERTa encoders (word-level tokenizer from the ``tokenizers`` library)
saved in the formats franq's encoder backends load: an AlignScore Lightning checkpoint
and a Hugging Face NLI sequence classifier. No network; built in a second."""
from __future__ import annotations

from pathlib import Path

from franq.evaluation.faithfulness_backends import build_alignscore as _build_alignscore
from franq.evaluation.faithfulness_backends import tiny_roberta_config as _tiny_roberta_config
from franq.evaluation.faithfulness_backends import word_tokenizer

WORDS = """the a of and in to is was by for on with as at from that it its this are be
tower paris france eiffel built iron lattice capital city river seine engineer gustave designed
bridge year 1887 1889 1900 tall metres height visitors million french europe largest museum
louvre art painting mona lisa question answer claim supported not true false born died
water boils at degrees celsius sea level moon earth sun planet orbit""".split()


def build_tokenizer():
    return word_tokenizer(WORDS)


def tiny_roberta_config(vocab_size: int, max_positions: int = 66, **extra):
    return _tiny_roberta_config(vocab_size, max_positions, **extra)


def build_alignscore(directory: Path, *, seed: int = 0, max_positions: int = 66) -> tuple[Path, Path]:
    """A tiny random AlignScore checkpoint over :data:`WORDS` (see
    :func:`franq.evaluation.faithfulness_backends.build_alignscore`). Returns (checkpoint, base)."""
    return _build_alignscore(directory, seed=seed, max_positions=max_positions, words=WORDS)


def build_nli(directory: Path, *, seed: int = 0, labels=("contradiction", "neutral", "entailment")) -> Path:
    """A tiny RobertaForSequenceClassification NLI model with ``labels`` as id2label."""
    import torch
    from transformers import RobertaForSequenceClassification

    directory = Path(directory)
    tokenizer = build_tokenizer()
    config = tiny_roberta_config(len(tokenizer), num_labels=len(labels),
                                 id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)})
    torch.manual_seed(seed)
    model = RobertaForSequenceClassification(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


VERIFIER_LABELS = ("supported", "contradicted", "not_mentioned")


def build_verifier(directory: Path, *, seed: int = 0, max_length: int = 64, window_words: int = 12,
                   overlap_sentences: int = 1, aggregation: dict | None = None, dtype: str = "float32") -> Path:
    """A tiny random BertForSequenceClassification in the franq verifier format
    (:mod:`franq.verifier.model`): config with the three labels, model.safetensors, a
    WordPiece tokenizer over :data:`WORDS` (vocab.txt + tokenizer.json) and card.json."""
    import json

    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", *sorted(set(WORDS))]
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(directory / "vocab.txt"), do_lower_case=True,
                                  model_max_length=max_length)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=max(max_length, 64), num_labels=3,
                        id2label=dict(enumerate(VERIFIER_LABELS)),
                        label2id={l: i for i, l in enumerate(VERIFIER_LABELS)})
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    torch.nn.init.normal_(model.classifier.weight, std=2.0)
    if dtype == "float16":
        model = model.half()
    model.save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    card = {"format": "franq-verifier", "version": 1, "name": "tiny-verifier", "labels": list(VERIFIER_LABELS),
            "max_length": max_length, "window_words": window_words, "window_overlap_sentences": overlap_sentences,
            "data": [], "training": {"seed": seed, "note": "random weights for tests"}, "dev_metrics": {}}
    if aggregation is not None:
        card["aggregation"] = aggregation
    (directory / "card.json").write_text(json.dumps(card, indent=1), encoding="utf-8")
    (directory / "CARD.md").write_text("# tiny random verifier (tests only)\n", encoding="utf-8")
    return directory
