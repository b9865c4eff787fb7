"""franq's published-verifier backends against the upstream inference code itself, on the same
tiny random checkpoints (tests/tiny_verifiers.py) served to the upstream code from a fake,
offline Hugging Face cache under the repository names it hard-codes.

Upstream sources are read from local checkouts given on the command line (never copied into
franq): MiniCheck's ``minicheck/`` (github.com/Liyan06/MiniCheck, commit e9fd26ef), FactCG's
``factcg/`` (github.com/derenlei/FactCG, commit 49748b92) and a package holding a copy of
HHEM's ``modeling_hhem_v2.py`` / ``configuration_hhem_v2.py``. Both sides split sentences with
the same splitter (franq's: NLTK's Punkt algorithm; the Punkt model is not installed here),
so what is compared is everything else: chunk packing, input template, tokenization,
label reading and aggregation. Inputs: the first N ExpertQA rand_test answers, passages
joined as franq joins them, one claim per answer sentence.

    PYTHONPATH=.:tests python experiments/2026-11-28-published-verifiers-vs-upstream/compare.py \
        --minicheck /tmp/b46up --factcg /tmp/b46up/fcg --hhem /tmp/b46up --answers 20
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import types
from pathlib import Path

CACHE = Path(tempfile.mkdtemp(prefix="fake-hub-"))
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_CACHE=str(CACHE / "hub"),
                  HF_HOME=str(CACHE), OMP_NUM_THREADS="1")

import numpy as np
import torch

from franq.faithfulness import published
from franq.faithfulness.base import passages_context
from franq.faithfulness.factcg import FactCGFaithfulness
from franq.faithfulness.hhem import HHEMFaithfulness
from franq.faithfulness.minicheck import MiniCheckFaithfulness
from franq.types import Passage
from tiny_verifiers import build_factcg, build_hhem, build_minicheck

REV = "0" * 40


def serve(cache: Path, repo: str, src: Path) -> None:
    """``src``'s files as ``repo`` at revision main in a Hugging Face hub cache."""
    d = cache / f"models--{repo.replace('/', '--')}"
    snap = d / "snapshots" / REV
    snap.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        (snap / f.name).write_bytes(f.read_bytes())
    (d / "refs").mkdir(exist_ok=True)
    (d / "refs" / "main").write_text(REV)


def inputs(n: int) -> tuple[list[str], list[str]]:
    from claims.decompose import split_sentences

    docs, claims = [], []
    with open("datasets/expertqa/test.jsonl", encoding="utf-8") as f:
        for line in list(f)[:n]:
            r = json.loads(line)
            doc = passages_context([Passage(p["text"], title=p.get("title") or "") for p in r["passages"]])
            for s, e in split_sentences(r["answer"]):
                docs.append(doc)
                claims.append(r["answer"][s:e])
    return docs, claims


def cut(text: str) -> str:
    """What MiniCheck reports as a used chunk: its input text up to ``</s>`` (with DeBERTa's
    ``[SEP]`` as EOS there is none, and it drops the last character)."""
    return text[:text.find("</s>")]


def row(name: str, ours: np.ndarray, theirs: np.ndarray, chunks: int) -> str:
    diff = np.abs(np.asarray(ours) - np.asarray(theirs))
    return f"| {name} | {len(ours)} | {chunks} | {diff.max():.2e} | {np.mean(diff):.2e} |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minicheck", required=True, help="a directory holding MiniCheck's minicheck/ package")
    ap.add_argument("--factcg", required=True, help="a directory holding FactCG's factcg/ package")
    ap.add_argument("--hhem", required=True, help="a directory holding hhem_up/ (modeling_hhem_v2.py copy)")
    ap.add_argument("--answers", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args()
    out = Path(args.out).resolve() if args.out else None
    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="published-"))
    docs, claims = inputs(args.answers)
    rows = []

    # MiniCheck: minicheck.minicheck.MiniCheck(model_name=...).score(docs, claims, chunk_size)
    sys.path.insert(0, args.minicheck)
    sys.modules["minicheck"] = types.ModuleType("minicheck")  # its __init__ would download Punkt
    sys.modules["minicheck"].__path__ = [str(Path(args.minicheck) / "minicheck")]
    upstream = importlib.import_module("minicheck.minicheck")
    importlib.import_module("minicheck.inference").sent_tokenize = published.sent_tokenize
    names = {"flan-t5": ("flan-t5-large", "lytang/MiniCheck-Flan-T5-Large"),
             "roberta": ("roberta-large", "lytang/MiniCheck-RoBERTa-Large"),
             "deberta": ("deberta-v3-large", "lytang/MiniCheck-DeBERTa-v3-Large")}
    for kind, (model_name, repo) in names.items():
        local = build_minicheck(work / repo.split("/")[1], kind, seed=1)
        serve(CACHE / "hub", repo, local)
        theirs = upstream.MiniCheck(model_name=model_name, batch_size=16)
        for chunk_size in (None, 60):
            _, p_up, used, _ = theirs.score(docs=docs, claims=claims, chunk_size=chunk_size)
            ours = MiniCheckFaithfulness(local, chunk_size=chunk_size, device="cpu")
            p = ours.predict(list(zip(docs, claims)))
            same = all(u == [cut(c + ours.tokenizer.eos_token + s) for c in ours.chunks(d)]
                       for u, d, s in zip(used, docs, claims))
            rows.append(row(f"minicheck {kind}, chunk_size {chunk_size or 'default'}"
                            + ("" if same else " (chunks DIFFER)"), p, p_up, sum(map(len, used))))

    # FactCG: factcg.inference.Inferencer(use_hf_ckpt=True).batch_inference(premises, hypotheses)
    sys.path.insert(0, args.factcg)
    package = types.ModuleType("factcg")  # its __init__ downloads Punkt and imports training code
    package.__path__ = [str(Path(args.factcg) / "factcg")]
    sys.modules["factcg"] = package
    sys.modules["factcg.grounding_model"] = types.SimpleNamespace(GroundingModel=None)
    fcg = importlib.import_module("factcg.inference")
    fcg.sent_tokenize = published.sent_tokenize
    fcg.nltk.word_tokenize = published.word_tokenize
    local = build_factcg(work / "FactCG-DeBERTa-v3-Large", seed=2)
    os.chdir(work)  # the published code reads its checkpoint from ./cache
    serve(work / "cache", "yaxili96/FactCG-DeBERTa-v3-Large", local)
    theirs = fcg.Inferencer(batch_size=32, verbose=False, use_hf_ckpt=True)
    p_up, _ = theirs.batch_inference(docs, claims)
    ours = FactCGFaithfulness(local, device="cpu")
    p = ours.predict(list(zip(docs, claims)))
    same = all(theirs.chunking_src(d) == ours.chunks(d) for d in docs)
    rows.append(row("factcg" + ("" if same else " (chunks DIFFER)"), p, p_up,
                    sum(len(ours.chunks(d)) for d in docs)))

    # HHEM: HHEMv2ForSequenceClassification.from_pretrained(dir).predict(pairs)
    sys.path.insert(0, args.hhem)
    hhem_up = importlib.import_module("hhem_up.modeling_hhem_v2")
    hhem, foundation = build_hhem(work / "hhem", seed=3)
    serve(CACHE / "hub", "google/flan-t5-base", foundation)
    theirs = hhem_up.HHEMv2ForSequenceClassification.from_pretrained(hhem)
    pairs = list(zip(docs, claims))  # predict pads all it is given into one batch: 4 at a time
    p_up = np.concatenate([theirs.predict(pairs[i:i + 4]).numpy() for i in range(0, len(pairs), 4)])
    p = HHEMFaithfulness(hhem, foundation=foundation, device="cpu").predict(list(zip(docs, claims)))
    rows.append(row("hhem-2.1-open", p, p_up, len(docs)))

    table = "\n".join(["| backend | claims | chunks | max abs diff | mean abs diff |", "|---|---|---|---|---|", *rows])
    text = (f"# franq's published-verifier backends vs the upstream code\n\n{args.answers} ExpertQA rand_test "
            f"answers, {len(claims)} claims; tiny random checkpoints; CPU, float32.\n\n"
            f"    {' '.join(['python', *sys.argv])}\n\n{table}\n")
    print(text)
    if out:
        out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
