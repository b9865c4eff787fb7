"""Both FRANQ terms from a chat model (issue 46.4): what ``mode = "chat"`` asks of the server
per claim, and what it saves on the local machine against the long form with the same two
chat scorers (which also loads the local model to align claims to tokens). The chat server is
a local OpenAI-compatible stand-in that answers at once (``True``, with ``top_logprobs``) and
counts each prompt's tokens with the embedded SmolLM2 tokenizer and its chat template, so the
local seconds are franq's own (splitting, the verifier, the client) and the tokens are those
a Llama-style chat server would report; a real server adds its own latency per request
(``concurrency`` requests in flight). Prints the table and writes it, with the command, to
benchmarks/results/chat.md.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_chat.py [--n 20] [--out FILE]

The answers are the first ``n`` ExpertQA held-out answers of ``bench_fast.py``, citation
markers stripped, split by each stack (no given claims).
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import torch

import franq
from franq.evaluation.data import expertqa_held_out
from franq.fit import shipped_fast as fast

ROOT = Path(__file__).resolve().parents[1]
TOP = {"content": [{"token": "True", "logprob": -0.36, "bytes": None, "top_logprobs": [
    {"token": "True", "logprob": -0.36, "bytes": None}, {"token": "False", "logprob": -1.2, "bytes": None}]}]}


class _Server(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: "True" at once; usage counted with the embedded tokenizer."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        tok = self.server.tokenizer
        text = tok.apply_chat_template(body["messages"], add_generation_prompt=True, tokenize=False)
        n = len(tok(text, add_special_tokens=False)["input_ids"])
        with self.server.lock:
            self.server.prompts.append((n, "Passages:" in body["messages"][-1]["content"]))
        out = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                          "choices": [{"index": 0, "finish_reason": "length", "logprobs": TOP,
                                       "message": {"role": "assistant", "content": "True"}}],
                          "usage": {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def _server():
    from transformers import AutoTokenizer

    from franq.lm.load import dequantized_cache, embedded_gguf_path

    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    srv.daemon_threads, srv.lock, srv.prompts = True, threading.Lock(), []
    srv.tokenizer = AutoTokenizer.from_pretrained(dequantized_cache(embedded_gguf_path()))
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    return srv


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(n: int) -> list[str]:
    torch.set_num_threads(1)
    srv = _server()
    url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    table = {"model": "bench-chat", "base_url": url, "api_key_env": "FRANQ_BENCH_KEY"}
    base = {"limits": {"passage_chars": fast.PASSAGE_CHARS}, "calibration": {"calibrator": "none"},
            "scorers": {"chat_p_true": table, "chat_p_true_rag": table}}
    records = expertqa_held_out(ROOT / "datasets")[:n]
    examples = [franq.Example.from_dict({"question": r["question"], "passages": r["passages"],
                                         "answer": fast._uncited(r["answer"])}) for r in records]
    rss0 = _rss_mb()
    t = time.perf_counter()
    chat = franq.Franq.from_config(franq.FranqConfig.from_dict({**base, "mode": "chat"}))
    chat.score_many(examples[:1])  # warm: the verifier and spaCy loaded
    load = {"mode chat": time.perf_counter() - t}
    rss = {"mode chat": _rss_mb()}
    t = time.perf_counter()
    long_ = franq.Franq.from_config(franq.FranqConfig.from_dict(
        {**base, "mode": "long", "uq": {"long": {"faith": "chat_p_true_rag", "unfaith": "chat_p_true"}}}))
    long_.score_many(examples[:1])
    load["long form, chat scorers"] = time.perf_counter() - t
    rss["long form, chat scorers"] = _rss_mb()
    stacks = {"mode chat": chat, "long form, chat scorers": long_}
    seconds = {k: [] for k in stacks}
    claims = {k: 0 for k in stacks}
    asked = {}
    for name, fr in stacks.items():
        srv.prompts.clear()
        for ex in examples:
            t = time.perf_counter()
            [res] = fr.score_many([ex])
            seconds[name].append(time.perf_counter() - t)
            claims[name] += len(res.scored)
        asked[name] = list(srv.prompts)
    lines = [(f"{len(examples)} ExpertQA held-out answers (citation markers stripped), split by each stack; one torch "
              f"thread, {platform.node()} (a 2-core machine shared with other jobs); the chat server a local stand-in "
              "that answers at once, prompt tokens counted with the SmolLM2 tokenizer and its chat template. Peak RSS "
              f"is the process's (before either stack: {rss0:.0f} MB); the long form's row includes the chat mode's."), "",
             ("| stack | loads a causal LM | claims | requests per claim | prompt tokens per claim (median request: "
             "with passages / without) | franq's own s per answer (median) | first answer, load included, s | "
             "peak RSS MB |"), "|---|---|---|---|---|---|---|---|"]
    for name, fr in stacks.items():
        got = asked[name]
        with_p = [k for k, p in got if p]
        without = [k for k, p in got if not p]
        lines.append(f"| {name} | {'yes' if fr.lm is not None else 'no'} | {claims[name]} | "
                     f"{len(got) / max(claims[name], 1):.2f} | {sum(k for k, _ in got) / max(claims[name], 1):.0f} "
                     f"({np.median(with_p):.0f} / {np.median(without):.0f}) | {np.median(seconds[name]):.2f} | "
                     f"{load[name]:.1f} | {rss[name]:.0f} |")
    speed = np.median(np.array(seconds["long form, chat scorers"]) / np.array(seconds["mode chat"]))
    lines += ["", (f"Median per-answer ratio, long form / mode chat: {speed:.1f}x (franq's side only). A claim asked "
              "twice under the same question in one call is asked once, so requests per claim can be below 2.")]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "chat.md")
    args = ap.parse_args()
    import os

    os.environ.setdefault("FRANQ_BENCH_KEY", "local")
    lines = run(args.n)
    cmd = ("OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_chat.py " + " ".join(sys.argv[1:])).strip()
    text = "\n".join(["# mode chat: both terms from a chat model, no causal LM (issue 46.4)", "",
                      f"Command: `{cmd}`", "", *lines, ""])
    print(text)
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
