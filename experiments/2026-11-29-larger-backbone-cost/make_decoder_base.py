"""A base directory for `franq fit verifier --base DIR` from the embedded SmolLM2-135M: its first
``--layers`` decoder layers, saved so that AutoModelForSequenceClassification loads them (the
classification head is new), and its tokenizer given a pair template: ``tokenizer(premise,
claim)`` encodes "premise <|im_start|> claim", where the model's own tokenizer joins the two with
nothing between. The trainer and `Verifier` load the tokenizer from the directory, so both read
pairs that way with no change to franq. See README.md beside this file.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-larger-backbone-cost/make_decoder_base.py --layers 4 OUT
"""
import argparse
from pathlib import Path

from tokenizers.processors import TemplateProcessing
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

from franq.lm.load import dequantized_cache, embedded_gguf_path

SEP = "<|im_start|>"

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=4)
    args = ap.parse_args()
    src = dequantized_cache(embedded_gguf_path())
    config = AutoConfig.from_pretrained(src)
    config.num_hidden_layers = args.layers
    model = AutoModelForCausalLM.from_pretrained(src, config=config)
    tok = AutoTokenizer.from_pretrained(src)
    sep = tok.convert_tokens_to_ids(SEP)
    tok.backend_tokenizer.post_processor = TemplateProcessing(single="$A", pair=f"$A {SEP} $B:1",
                                                              special_tokens=[(SEP, sep)])
    out = Path(args.out)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    enc = AutoTokenizer.from_pretrained(out)("The tower is in Paris.", "It is in Paris.")["input_ids"]
    print(f"{out}: {args.layers} layers, pad {tok.pad_token!r}; a pair reads {AutoTokenizer.from_pretrained(out).decode(enc)!r}")
