"""The embedded model asked to paraphrase 12 sentences of recipe v8's training premises
(README.md, last section): does it keep every fact while changing the wording?

    OMP_NUM_THREADS=1 python experiments/2026-11-29-near-relevant-support/paraphrase_probe.py PAIRS-V8.json.xz
"""
import json
import lzma
import random
import sys
import time

import torch

from claims.decompose import split_sentences
from franq.lm.chat import LocalChat
from franq.lm.model import CausalLM

PROMPT = "Rewrite this sentence in different words, keeping every fact, name and number:\n{}"

if __name__ == "__main__":
    torch.set_num_threads(1)
    chat = LocalChat(CausalLM.load())
    with lzma.open(sys.argv[1]) as f:
        pairs = json.load(f)["pairs"]["train"]["contrast"]
    sents = []
    for r in random.Random(1).sample(pairs, 400):
        for s, e in split_sentences(r["premise"]):
            t = r["premise"][s:e]
            if 10 <= len(t.split()) <= 30 and t[0].isupper():
                sents.append(t)
                break
    t0 = time.time()
    for s in sents[:12]:
        reply = chat.complete([{"role": "user", "content": PROMPT.format(s)}], max_tokens=60)
        print("IN :", s, "\nOUT:", reply.text.strip().split("\n")[0], "\n")
    print(f"{time.time() - t0:.1f} s for 12")
