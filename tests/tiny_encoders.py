"""Tiny random RoBERTa encoders (word-level tokenizer from the ``tokenizers`` library)
saved in the formats franq's encoder backends load: an AlignScore Lightning checkpoint
and a Hugging Face NLI sequence classifier. No network; built in a second."""
from __future__ import annotations

from pathlib import Path

WORDS = """the a of and in to is was by for on with as at from that it its this are be
tower paris france eiffel built iron lattice capital city river seine engineer gustave designed
bridge year 1887 1889 1900 tall metres height visitors million french europe largest museum
louvre art painting mona lisa question answer claim supported not true false born died
water boils at degrees celsius sea level moon earth sun planet orbit""".split()
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def build_tokenizer():
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIALS + sorted(set(WORDS)))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.RobertaProcessing(("</s>", vocab["</s>"]), ("<s>", vocab["<s>"]))
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                   cls_token="<s>", pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")


def tiny_roberta_config(vocab_size: int, max_positions: int = 66, **extra):
    from transformers import RobertaConfig

    return RobertaConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=max_positions, pad_token_id=1,
                         bos_token_id=0, eos_token_id=2, **extra)


def build_alignscore(directory: Path, *, seed: int = 0, max_positions: int = 66) -> tuple[Path, Path]:
    """Save ``directory/base`` (config + tokenizer) and ``directory/tiny-align.ckpt`` in the
    published AlignScore layout: ``{"state_dict": {base_model.*, mlm_head.*, bin_layer.*,
    tri_layer.*, reg_layer.*}}`` plus Lightning's bookkeeping. Returns (checkpoint, base)."""
    import torch
    from torch import nn
    from transformers import RobertaModel
    from transformers.models.roberta.modeling_roberta import RobertaLMHead

    directory = Path(directory)
    base = directory / "base"
    tokenizer = build_tokenizer()
    config = tiny_roberta_config(len(tokenizer), max_positions)
    config.save_pretrained(base)
    tokenizer.save_pretrained(base)
    torch.manual_seed(seed)
    state = {f"base_model.{k}": v for k, v in RobertaModel(config).state_dict().items()}
    # older transformers kept this buffer in the state dict, as the published files do
    state["base_model.embeddings.position_ids"] = torch.arange(max_positions)[None]
    state.update({f"mlm_head.{k}": v for k, v in RobertaLMHead(config).state_dict().items()})
    for name, size in (("bin_layer", 2), ("tri_layer", 3), ("reg_layer", 1)):
        layer = nn.Linear(config.hidden_size, size)
        nn.init.normal_(layer.weight, std=2.0)
        state.update({f"{name}.{k}": v for k, v in layer.state_dict().items()})
    ckpt = directory / "tiny-align.ckpt"
    torch.save({"epoch": 0, "global_step": 1, "pytorch-lightning_version": "1.7.7", "state_dict": state}, ckpt)
    return ckpt, base


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
