"""Faithfulness backends on ExpertQA rand_test (human support labels), plus the AlignScore
batching speed check; a markdown table (``--out``). Run by ``franq bench faithfulness``:

    franq bench faithfulness \
        --test-scores benchmarks/cache/expertqa-test.embedded-lexical.jsonl \
        --judge-claims 120 --out benchmarks/results/faithfulness-backends.md

Faithful = support Complete; unfaithful = Missing / Incomplete / Partial; passages = the
answer's cited evidence. Metrics: AUROC, PR-AUC (faithful = positive), ECE (10 equal-width
bins), milliseconds per claim (wall clock, shared 2-core CPU). Backends that need a
checkpoint absent here (AlignScore, NLI) are listed as not run. The context-PMI features
come from a ``franq score`` output of the test file (``--test-scores``; produce it with
``python -m franq score datasets/expertqa/test.jsonl -o FILE``); only the answers present
in it are used for those rows, and lexical / combined are repeated on the same subset.
"""
from __future__ import annotations

import datetime
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import GroupKFold

from franq.evaluation.metrics import auroc, ece, pr_auc
from franq.faithfulness.combined import CombinedFaithfulness
from franq.fit.faithfulness_map import load_claims
from franq.faithfulness.features import feature_matrix
from franq.faithfulness.lexical import LexicalFaithfulness
from franq.faithfulness.logistic import LogisticMap


def row(name, p, y, ms=None, note=""):
    """AUROC and PR-AUC (average precision) for the faithful claims (y = 1), ECE (10 bins)."""
    p, y = np.asarray(p, float), np.asarray(y, int)
    return (f"| {name} | {len(y)} | {auroc(p, y):.3f} | {pr_auc(-p, 1 - y):.3f} | "
            f"{ece(p, y):.3f} | {'-' if ms is None else f'{ms:.2f}'} | {note} |")


def timed(fn, n):
    t = time.perf_counter()
    out = fn()
    return out, 1000 * (time.perf_counter() - t) / max(n, 1)


def cross_fit(names, pairs, passes, y, groups, folds=5) -> np.ndarray:
    """Out-of-fold predictions of a logistic map, folds grouped by answer."""
    x = feature_matrix(names, pairs, passes)
    out = np.zeros(len(y))
    for tr, te in GroupKFold(n_splits=folds).split(x, y, groups):
        out[te] = LogisticMap.fit(x[tr], y[tr], names).predict(x[te])
    return out


def reference_loop(backend, pairs, max_length: int = 512) -> np.ndarray:
    """The published AlignScore inference pattern: one example at a time, every (chunk,
    claim sentence) pair padded to ``max_length`` (``padding="max_length"``)."""
    import torch

    from franq.faithfulness.alignscore import ALIGNED
    from franq.faithfulness.chunks import chunk_context, claim_sentences

    out = []
    for context, claim in pairs:
        chunks, sents = chunk_context(context), claim_sentences(claim)
        prem = [c for _ in sents for c in chunks]
        hyp = [s for s in sents for _ in chunks]
        enc = backend.tokenizer(prem, hyp, padding="max_length", truncation="only_first",
                                max_length=max_length, return_tensors="pt")
        with torch.inference_mode():
            p = backend.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])[:, ALIGNED]
        out.append(p.view(len(sents), len(chunks)).max(dim=1).values.mean().item())
    return np.array(out)


WORDS = ("the a of and in to is was by for on with as at from that it its this are be tower paris france eiffel "
         "built iron capital city river engineer designed bridge year tall metres visitors french europe museum "
         "question answer claim supported not true false born died water sea level moon earth sun").split()


SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def word_tokenizer(words):
    """A RoBERTa-style tokenizer over a word-level vocabulary (the specials, then ``words``
    sorted), lower-casing and splitting on whitespace; no download."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIALS + sorted(set(words)))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.RobertaProcessing(("</s>", vocab["</s>"]), ("<s>", vocab["<s>"]))
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                   cls_token="<s>", pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")


def tiny_roberta_config(vocab_size: int, max_positions: int, **extra):
    """A two-layer RoBERTa of hidden size 32."""
    from transformers import RobertaConfig

    return RobertaConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=max_positions, pad_token_id=1,
                         bos_token_id=0, eos_token_id=2, **extra)


def build_alignscore(directory: Path, *, seed: int = 0, max_positions: int = 514, words=WORDS) -> tuple[Path, Path]:
    """A random two-layer RoBERTa (hidden size 32, word-level tokenizer over ``words``) saved in
    the published AlignScore checkpoint layout: ``directory/base`` (config + tokenizer) and
    ``directory/tiny-align.ckpt`` (``{"state_dict": {base_model.*, mlm_head.*, bin_layer.*,
    tri_layer.*, reg_layer.*}}`` plus Lightning's bookkeeping). For timing the batching (its
    outputs mean nothing) and for tests. Returns (checkpoint, base directory)."""
    import torch
    from torch import nn
    from transformers import RobertaModel
    from transformers.models.roberta.modeling_roberta import RobertaLMHead

    directory = Path(directory)
    base = directory / "base"
    tokenizer = word_tokenizer(words)
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


def alignscore_speed(pairs, repeats: int) -> list[str]:
    from franq.faithfulness.alignscore import AlignScoreFaithfulness

    modes = {
        "reference-style per-example loop (pad every pair to 512, as the published inference)":
            lambda b: reference_loop(b, pairs),
        "franq per-example loop (`predict([pair])` per claim, dynamic padding)":
            lambda b: np.concatenate([b.predict([p]) for p in pairs]),
        "franq batched across claims (`predict(pairs)`)": lambda b: b.predict(pairs),
    }
    times: dict[str, list[float]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        backend = AlignScoreFaithfulness(*build_alignscore(Path(tmp), max_positions=514), device="cpu")
        outputs = {}
        for _ in range(repeats):  # interleave the modes on the shared CPU
            for m, fn in modes.items():
                t = time.perf_counter()
                outputs[m] = fn(backend)
                times[m].append(time.perf_counter() - t)
    first = list(outputs.values())
    agree = max(float(np.abs(o - first[-1]).max()) for o in first)
    n = len(pairs)
    batched = list(modes)[-1]
    lines = [f"Tiny AlignScore checkpoint (2-layer RoBERTa, hidden 32, published Lightning layout, "
             f"512-token encoder) on the first {n} test claims, {repeats} interleaved repeats:", "",
             "| mode | median s | ms / claim | batched speed-up (median of per-repeat ratios) |",
             "|---|---|---|---|"]
    for m, ts in times.items():
        ratio = statistics.median(a / b for a, b in zip(ts, times[batched]))
        lines.append(f"| {m} | {statistics.median(ts):.2f} | {1000 * statistics.median(ts) / n:.1f} | {ratio:.1f}x |")
    lines += ["", f"Largest difference between the modes' scores: {agree:.1e} "
              "(the reference truncates any chunk over 512 tokens; franq splits it instead)."]
    return lines


def run(test: Path, *, test_scores: Path | None = None, judge_claims: int = 0, speed_claims: int = 200,
        repeats: int = 3, out: Path | None = None, command: str = "franq bench faithfulness") -> str:
    """The report (printed, and written to ``out`` when given)."""
    claims = load_claims(test, test_scores)
    pairs = [(c.context, c.claim) for c in claims]
    y = np.array([c.is_faithful for c in claims], dtype=int)
    lines = ["| backend | claims | AUROC | PR-AUC | ECE | ms/claim | note |", "|---|---|---|---|---|---|---|"]
    lex, ms = timed(lambda: LexicalFaithfulness().predict(pairs), len(pairs))
    lines.append(row("lexical-v1", lex, y, ms, "foundation default"))
    combined = CombinedFaithfulness()
    comb, ms = timed(lambda: combined.predict(pairs), len(pairs))
    lines.append(row(combined.name, comb, y, ms, f"fitted on train: {', '.join(combined.map.features)}"))
    cited = np.array([("[" in c.claim) for c in claims], float)
    lines.append(row("(diagnostic) claim carries a citation marker", cited, y, None,
                     "dataset artefact, not a backend; not shipped"))

    sub = [k for k, c in enumerate(claims) if c.passes is not None]
    if len(sub) >= 50 and len(set(y[sub].tolist())) == 2:
        ys = y[sub]
        sp = [pairs[k] for k in sub]
        passes = [claims[k].passes for k in sub]
        groups = [claims[k].answer_id for k in sub]
        n_ans = len(set(groups))
        lines.append(f"| *subset with LM passes: {n_ans} answers* | | | | | | |")
        lines.append(row("lexical-v1 (subset)", lex[sub], ys))
        lines.append(row(f"{combined.name} (subset)", comb[sub], ys))
        pmi = np.array([p["pmi_mean"] for p in passes])
        lines.append(row("context PMI, raw mean token log-ratio", 1 / (1 + np.exp(-pmi)), ys, None,
                         "free: from FRANQ's two passes; AUROC does not depend on the map"))
        lines.append(row("context-pmi (5-fold cross-fitted map)",
                         cross_fit(("pmi_mean",), sp, passes, ys, groups), ys, None, "folds grouped by answer"))
        names = combined.map.features + ("pmi_mean", "rag_mean", "closed_mean")
        lines.append(row("combined text + PMI (5-fold cross-fitted)", cross_fit(names, sp, passes, ys, groups),
                         ys, None, "folds grouped by answer"))
    if judge_claims:
        from franq.faithfulness.chat_judge import LMJudgeFaithfulness
        from franq.lm import CausalLM

        judge = LMJudgeFaithfulness(CausalLM.load(None, device="cpu"))
        k = judge_claims
        pj, ms = timed(lambda: judge.predict(pairs[:k]), k)
        lines.append(f"| *first {k} test claims* | | | | | | |")
        lines.append(row("lexical-v1 (same claims)", lex[:k], y[:k]))
        lines.append(row(f"{judge.name}", pj, y[:k], ms, "P(yes)/(P(yes)+P(no)), max over chunks"))
    lines.append("| alignscore | - | not run | | | | no AlignScore checkpoint on this machine (no hub access) |")
    lines.append("| nli | - | not run | | | | no NLI model on this machine (no hub access) |")
    lines.append("| judge via OpenAI-compatible server | - | not run | | | | no server reachable |")

    speed = alignscore_speed(pairs[: speed_claims], repeats) if speed_claims else []
    report = "\n".join([
        f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.node()} "
        "(2-core CPU shared with other developers' jobs; timings are noisy).",
        f"Command: `{command}`", "",
        f"ExpertQA rand_test, {len(y)} claims with a support label ({y.mean():.1%} faithful).", "",
        *lines, "", *speed])
    print(report)
    if out:
        Path(out).write_text(report + "\n", encoding="utf-8")
    return report
