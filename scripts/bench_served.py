"""Scoring with a served model (issue 26), against a real llama-cpp-python server on the
embedded GGUF, on this machine (no GPU here).

    python scripts/bench_served.py --llama-python .venv-llama/bin/python \
        [--input datasets/expertqa-batch50/answers.jsonl] [--agree 20] [--out benchmarks/results/served.md]

1. Agreement: p(c|x,r) and p(c|x) token by token, from the server and from franq's local
   pass of the same GGUF (de-quantised to float32), over the bundled example and the
   first ``--agree`` answers: max |diff|, mean |diff|, Spearman over tokens and over
   answers' mean log-probabilities.
2. Throughput: ``franq score`` (the batch runner, ``run_jsonl``) over the answers with 4
   requests in flight, with 1, and with the in-process model, interleaved A B C C B A;
   the ratios of the summed times.
3. Overhead per answer beyond the server's compute: franq's wall time minus the time it
   was blocked on the server (1 in flight), and the HTTP round trip of an empty request.
One torch thread; the server has one thread too. The CPU is shared: read the ratios.

    python scripts/bench_served.py --llama-python .venv-llama/bin/python --record tests/fixtures/served/llama-cpp-python.json

records the real server's replies to franq's requests (trimmed) as the fixture the fake
llama-cpp-python server of tests/test_served.py is checked against.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from importlib import resources
from pathlib import Path

import numpy as np

from franq.config import FranqConfig
from franq.io import parse_example
from franq.lm import CausalLM
from franq.lm.load import embedded_gguf_path
from franq.lm.served import connect
from franq.lm.served.launch import LlamaServer
from franq.lm.threads import configure_threads
from franq.pipeline import Franq
from franq.runners.local import LocalEngine, run_jsonl

BASE = {"faithfulness": {"name": "lexical"}, "calibration": {"calibrator": "none"}}


def agreement(served, local, examples) -> dict:
    from scipy.stats import spearmanr

    diffs, g_all, w_all, g_mean, w_mean = [], [], [], [], []
    for ex in examples:
        ids, _ = local.encode_answer(ex.answer)
        items = [(local.rag_prompt(ex.question, ex.passages, reserve=len(ids)).ids, ids),
                 (local.closed_book_prompt(ex.question).ids, ids)]
        for g, w in zip(served.continuation_logprobs(items), local.continuation_logprobs(items)):
            diffs.append(np.abs(g - w))
            g_all += list(g)
            w_all += list(w)
            g_mean.append(float(np.mean(g)))
            w_mean.append(float(np.mean(w)))
    d = np.concatenate(diffs)
    return {"answers": len(examples), "tokens": int(d.size), "max_abs_diff": float(d.max()),
            "mean_abs_diff": float(d.mean()), "spearman_tokens": float(spearmanr(g_all, w_all).statistic),
            "spearman_answer_means": float(spearmanr(g_mean, w_mean).statistic)}


def record_fixture(url: str, local, path: str, version: str) -> None:
    """The real server's replies to the requests franq sends, trimmed, as a test fixture."""
    import httpx

    tok = local.tokenizer

    def post(route, payload):
        r = httpx.post(url + route, json=payload, timeout=600)
        r.raise_for_status()
        return r.json()

    def trim(body):
        body = {**body, "id": "cmpl-" + body["id"][-4:], "created": 1, "model": Path(body["model"]).name}
        return body

    def decode(ids):
        return tok.decode(ids, skip_special_tokens=False)

    def item(prompt_ids, answer_ids):
        return {"prompt_ids": prompt_ids, "answer_ids": answer_ids, "prompt_text": decode(prompt_ids),
                "answer_text": decode(answer_ids)}

    def echo(text):
        return {"prompt": text, "echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0.0}

    def lp_local(prompt_ids, answer_ids):
        return [round(float(x), 4) for x in local.continuation_logprobs([(prompt_ids, answer_ids)])[0]]

    models = httpx.get(url + "/v1/models").json()
    models["data"][0]["id"] = Path(models["data"][0]["id"]).name
    probe = "Paris is the capital"
    fx = {"source": f"recorded from llama-cpp-python {version}'s server (python -m llama_cpp.server --model "
                    f"SmolLM2-135M-Instruct.Q4_1.gguf --logits_all true --n_threads 1) by scripts/bench_served.py "
                    f"--record; ids and pieces are the embedded tokenizer's; reply ids shortened, the model path "
                    f"cut to its name",
          "info": {"/v1/models": models},
          "setup": {"bos_token": tok.bos_token, "bos_token_id": tok.bos_token_id,
                    "tokenize": {"request": {"method": "POST", "path": "/extras/tokenize", "payload": {"input": probe}},
                                 "response": post("/extras/tokenize", {"input": probe})},
                    "encode": {probe: tok.encode(probe, add_special_tokens=False)}}}
    chat = tok.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}],
                                   add_generation_prompt=True, tokenize=False)
    it = item(tok.encode(chat, add_special_tokens=False), tok.encode("Paris is the capital.", add_special_tokens=False))
    payload = echo(it["prompt_text"] + it["answer_text"])
    resp = trim(post("/v1/completions", payload))
    lp, n = resp["choices"][0]["logprobs"], len(it["answer_ids"])
    end = len(lp["tokens"]) - resp["usage"]["completion_tokens"]
    fx["score"] = {"item": it, "request": {"method": "POST", "path": "/v1/completions", "payload": payload},
                   "response": resp, "logprobs": lp["token_logprobs"][end - n:end],
                   "local_float32_logprobs": lp_local(it["prompt_ids"], it["answer_ids"])}
    bare = item(tok.encode("Paris is", add_special_tokens=False), tok.encode(" the capital", add_special_tokens=False))
    text = bare["prompt_text"] + bare["answer_text"]
    fx["no_bos"] = {
        "note": "a prompt that does not start with BOS: entry i carries the scores at position i (the distribution "
                "of token i + 1) and the generated token is dropped; with the BOS text in front (what franq sends) "
                "the entries are the tokens' own log-probabilities",
        "item": bare,
        "unaligned": {"payload": echo(text), "response": trim(post("/v1/completions", echo(text)))},
        "aligned": {"payload": echo(tok.bos_token + text), "response": trim(post("/v1/completions",
                                                                                 echo(tok.bos_token + text)))},
        "local_float32_logprobs": lp_local([tok.bos_token_id, *bare["prompt_ids"]], bare["answer_ids"])}
    params = {"n": 2, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "max_tokens": 4, "seed": 7}
    reqs = [{"method": "POST", "path": "/v1/completions",
             "payload": {"prompt": it["prompt_text"], "max_tokens": 4, "temperature": 1.0, "top_p": 1.0, "top_k": 0,
                         "min_p": 0.0, "repeat_penalty": 1.0, "logprobs": 1, "seed": 7 + i}} for i in range(2)]
    resps = [trim(post(r["path"], r["payload"])) for r in reqs]
    fx["sample"] = {"params": params, "requests": reqs, "responses": resps,
                    "draws": [{"text": c["text"], "logprobs": c["logprobs"]["token_logprobs"], "ids": None,
                               "finish": "length" if c["finish_reason"] == "length" else "eos"}
                              for c in (r["choices"][0] for r in resps)]}
    answer_ids = sorted({i for blk in (it, bare) for i in blk["answer_ids"]})
    fx["setup"]["pieces"] = {str(i): tok.decode([i], skip_special_tokens=False, clean_up_tokenization_spaces=False)
                             for i in answer_ids}
    Path(path).write_text(json.dumps(fx, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("wrote", path)


def timed(franq, path: Path, tmp: Path, tag: str) -> float:
    out = tmp / f"{tag}-{time.monotonic_ns()}.jsonl"
    t = time.perf_counter()
    s = run_jsonl(lambda: LocalEngine(franq), str(path), str(out), errors_path=str(out) + ".err", progress=False)
    assert s.scored and not s.bad, s
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-python", required=True)
    ap.add_argument("--input", default="datasets/expertqa-batch50/answers.jsonl")
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--agree", type=int, default=20)
    ap.add_argument("--out", default="benchmarks/results/served.md")
    ap.add_argument("--record", metavar="FIXTURE", help="record the real replies as a test fixture, then stop")
    a = ap.parse_args()
    configure_threads(1)
    if a.record:
        import subprocess

        version = subprocess.run([a.llama_python, "-c", "import llama_cpp; print(llama_cpp.__version__)"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        with LlamaServer(a.llama_python, embedded_gguf_path()) as url:
            record_fixture(url, CausalLM.load(device="cpu"), a.record, version)
        return
    lines = Path(a.input).read_text(encoding="utf-8").splitlines()[:a.n]
    tmp = Path(tempfile.mkdtemp(prefix="bench-served-"))
    src = tmp / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    bundled = parse_example(json.loads(resources.files("franq").joinpath("data/example.json").read_text()), "example")
    examples = [bundled] + [parse_example(json.loads(x), f"line {i}") for i, x in enumerate(lines[:a.agree])]
    local_lm = CausalLM.load(device="cpu")
    with LlamaServer(a.llama_python, embedded_gguf_path(), log=tmp / "server.log") as url:
        def served_franq(in_flight):
            cfg = FranqConfig.from_dict({**BASE, "model": {"server": url, "tokenizer": "embedded",
                                                           "in_flight": in_flight}})
            return Franq(cfg, connect(cfg.model))
        f4, f1 = served_franq(4), served_franq(1)
        agree = agreement(f1.lm, local_lm, examples)
        print(json.dumps(agree, indent=1), flush=True)
        local = Franq(FranqConfig.from_dict(BASE), local_lm)
        times = {"served-4": [], "served-1": [], "local": []}
        order = ["served-4", "served-1", "local", "local", "served-1", "served-4"]
        runs = {"served-4": f4, "served-1": f1, "local": local}
        blocked = {}
        for tag in order:
            fr = runs[tag]
            before = fr.lm.client.blocked_seconds if tag != "local" else 0.0
            times[tag].append(timed(fr, src, tmp, tag))
            if tag == "served-1":
                blocked.setdefault(tag, []).append(fr.lm.client.blocked_seconds - before)
            print(tag, f"{times[tag][-1]:.1f}s", flush=True)
        import httpx
        with httpx.Client(base_url=url) as http:
            rtt = []
            for _ in range(50):
                t = time.perf_counter()
                http.get("/v1/models")
                rtt.append(time.perf_counter() - t)
        requests_per_answer = f1.lm.client.requests_sent / (2 * a.n + 2)  # probe: 2 requests
    n = a.n
    tot = {k: sum(v) for k, v in times.items()}
    over = [(t - b) / n for t, b in zip(times["served-1"], blocked["served-1"])]
    rows = [
        "# Scoring with a served model (llama-cpp-python server, embedded SmolLM2 GGUF, CPU)",
        "",
        f"Command: `python scripts/bench_served.py --llama-python {a.llama_python} --input {a.input} "
        f"--n {a.n} --agree {a.agree}`",
        "",
        "No GPU was available to this task: server and franq share a busy 2-core CPU, one thread each.",
        "",
        "## Agreement with the local pass of the same GGUF",
        "",
        f"Bundled example + {a.agree} ExpertQA answers ({agree['tokens']} answer tokens, both conditions):",
        "",
        "| max abs diff | mean abs diff | Spearman (tokens) | Spearman (answer means) |",
        "| --- | --- | --- | --- |",
        f"| {agree['max_abs_diff']:.3f} | {agree['mean_abs_diff']:.4f} | {agree['spearman_tokens']:.4f} | "
        f"{agree['spearman_answer_means']:.4f} |",
        "",
        f"## Throughput, `franq score` over {n} answers (each variant twice, A B C C B A)",
        "",
        "| variant | seconds (runs) | answers/s | ratio |",
        "| --- | --- | --- | --- |",
    ]
    for k, label in (("served-4", "served, 4 in flight"), ("served-1", "served, 1 in flight"),
                     ("local", "in-process model")):
        rows.append(f"| {label} | {tot[k]:.1f} ({', '.join(f'{x:.1f}' for x in times[k])}) | "
                    f"{2 * n / tot[k]:.3f} | {tot['served-1'] / tot[k]:.2f}x vs 1 in flight |")
    rows += [
        "",
        f"4 vs 1 in flight: {tot['served-1'] / tot['served-4']:.2f}x; served (4 in flight) vs in-process: "
        f"{tot['local'] / tot['served-4']:.2f}x (above 1 = the server is faster).",
        f"Requests per answer: {requests_per_answer:.1f} (one per condition).",
        "",
        "## Overhead per answer beyond the server's compute",
        "",
        f"franq's own time per answer (wall minus the time blocked on the server, 1 in flight): "
        f"{statistics.mean(over) * 1000:.0f} ms (runs: {', '.join(f'{x * 1000:.0f}' for x in over)} ms); "
        f"this is decomposition, prompts and tokenizing, faithfulness and output, which the in-process run pays too.",
        f"HTTP round trip of an empty request: median {statistics.median(rtt) * 1000:.1f} ms, so "
        f"{2 * statistics.median(rtt) * 1000:.1f} ms per answer for its two requests.",
        "",
    ]
    Path(a.out).write_text("\n".join(rows), encoding="utf-8")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
