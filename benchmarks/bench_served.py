"""Scoring with a served model (issue 26), against a real llama-cpp-python server on the
embedded GGUF, on this machine (no GPU here).

    python benchmarks/bench_served.py --llama-python .venv-llama/bin/python \
        [--input datasets/expertqa-batch50/answers.jsonl] [--n 50] [--agree 20] [--f32-agree 2] \
        [--out benchmarks/results/served.md]

1. Agreement: p(c|x,r) and p(c|x) token by token, from the server and from franq's local
   pass of the same GGUF (de-quantised to float32), over the bundled example and the
   first ``--agree`` answers: max |diff|, mean |diff|, Spearman over tokens and over
   answers' mean log-probabilities. The control: the same on a server of an F32 copy of
   the GGUF (every tensor de-quantised, written with gguf-py) over the bundled example and
   ``--f32-agree`` answers: what is left there is not quantisation.
2. Throughput: ``franq score`` (the batch runner, ``run_jsonl``) over ``--n`` answers with
   4 requests in flight, with 1, and with the in-process model, interleaved A B C C B A;
   the ratios of the summed times.
3. Overhead per answer beyond the server's compute: franq's wall time minus the time it
   was blocked on the server (1 in flight), and the HTTP round trip of an empty request;
   and, inside the server, one pass's time split into the forward (a request without
   echo) and the echo reply (the same request again, its prompt cached).
One torch thread; the server has one thread too. The CPU is shared: read the ratios.

    python benchmarks/bench_served.py --llama-python .venv-llama/bin/python --record tests/fixtures/served/llama-cpp-python.json

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
from franq.lm.served.launch import LlamaServer, f32_gguf
from franq.lm.threads import configure_threads
from franq.pipeline import Franq
from franq.runners.local import LocalRunner, run_jsonl

BASE = {"faithfulness": {"name": "lexical"}, "calibration": {"calibrator": "none"}}


def agreement(served, local, examples) -> dict:
    """Served vs local log-probabilities over ``examples``: the summary over all answers
    scored, and (``alike``) over those the server's tokenizer splits as the local one does
    (the others are read by stretches: ``realigned``, their answer numbers)."""
    from scipy.stats import spearmanr

    from franq.lm.served.client import ServedModelError, ServerUnavailable

    per, refused, realigned = [], [], []
    engine = served.engine
    for k, ex in enumerate(examples):
        ids, _ = local.encode_answer(ex.answer)
        items = [(local.rag_prompt(ex.question, ex.passages, reserve=len(ids)).ids, ids),
                 (local.closed_book_prompt(ex.question).ids, ids)]
        before = getattr(engine, "realigned", 0)
        try:
            got = served.continuation_logprobs(items)
        except ServerUnavailable:
            raise
        except ServedModelError as exc:  # the server echoes another text: say so, count it
            refused.append(f"{'the bundled example' if k == 0 else f'answer on line {k - 1}'}: {exc}")
            print("refused:", exc, flush=True)
            continue
        odd = getattr(engine, "realigned", 0) != before
        if odd:
            realigned.append(k)
        for g, w in zip(got, local.continuation_logprobs(items)):
            per.append((k, odd, g, w))
            if odd:
                print(f"realigned answer {k}: max |diff| {np.max(np.abs(g - w)):.3f} at token "
                      f"{int(np.argmax(np.abs(g - w)))} of {len(g)}; sums {g.sum():.2f} vs {w.sum():.2f}", flush=True)

    def summary(rows):
        d = np.concatenate([np.abs(g - w) for _, _, g, w in rows])
        g_all = np.concatenate([g for _, _, g, _ in rows])
        w_all = np.concatenate([w for _, _, _, w in rows])
        return {"answers": len({k for k, *_ in rows}), "tokens": int(d.size), "max_abs_diff": float(d.max()),
                "mean_abs_diff": float(d.mean()), "spearman_tokens": float(spearmanr(g_all, w_all).statistic),
                "spearman_answer_means": float(spearmanr([np.mean(g) for *_, g, _ in rows],
                                                         [np.mean(w) for *_, w in rows]).statistic),
                "sum_abs_diff_max": float(max(abs(g.sum() - w.sum()) for *_, g, w in rows))}

    out = {**summary(per), "refused": refused, "realigned": realigned}
    if realigned and len(realigned) < len({k for k, *_ in per}):
        out["alike"] = summary([r for r in per if not r[1]])
    return out


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
                    f"SmolLM2-135M-Instruct.Q4_1.gguf --logits_all true --n_threads 1) by benchmarks/bench_served.py "
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


def pass_cost(url: str, local, ex) -> dict:
    """One p(c|x,r) pass inside the server: the forward alone (no echo, a fresh prompt), then
    the echo reply with the prompt cached (what is left is building the reply)."""
    import httpx

    ids, _ = local.encode_answer(ex.answer)
    prompt = local.rag_prompt(ex.question, ex.passages, reserve=len(ids)).ids
    text = local.tokenizer.decode([*prompt, *ids], skip_special_tokens=False)
    out = {"tokens": len(prompt) + len(ids)}
    with httpx.Client(base_url=url, timeout=1200) as http:
        for key, payload in (("forward", {"prompt": text, "max_tokens": 1, "temperature": 0.0}),
                             ("echo_cached", {"prompt": text, "echo": True, "logprobs": 1, "max_tokens": 1,
                                              "temperature": 0.0})):
            t = time.perf_counter()
            http.post("/v1/completions", json=payload).raise_for_status()
            out[key] = time.perf_counter() - t
    t = time.perf_counter()
    local.continuation_logprobs([(prompt, ids)])
    out["local"] = time.perf_counter() - t
    return out


def timed(franq, path: Path, tmp: Path, tag: str) -> float:
    out = tmp / f"{tag}-{time.monotonic_ns()}.jsonl"
    t = time.perf_counter()
    s = run_jsonl(lambda: LocalRunner(franq), str(path), str(out), errors_path=str(out) + ".err", progress=False)
    if s.bad or not s.scored:
        print(f"{tag}: {s.scored} scored, {s.bad} bad (see {out}.err)", flush=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-python", required=True)
    ap.add_argument("--input", default="datasets/expertqa-batch50/answers.jsonl")
    ap.add_argument("--n", type=int, default=50, help="answers in each throughput run")
    ap.add_argument("--agree", type=int, default=20)
    ap.add_argument("--f32-agree", type=int, default=2, help="answers for the F32 control (0: none)")
    ap.add_argument("--out", default="benchmarks/results/served.md")
    ap.add_argument("--agreement-only", action="store_true", help="the agreement checks only (printed as JSON)")
    ap.add_argument("--once", action="store_true", help="each throughput variant once (A B C), not twice (A B C C B A)")
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
    lines = Path(a.input).read_text(encoding="utf-8").splitlines()
    tmp = Path(tempfile.mkdtemp(prefix="bench-served-"))
    src = tmp / "in.jsonl"
    src.write_text("\n".join(lines[:a.n]) + "\n")
    bundled = parse_example(json.loads(resources.files("franq").joinpath("data/example.json").read_text()), "example")
    examples = [bundled] + [parse_example(json.loads(x), f"line {i}") for i, x in enumerate(lines[:a.agree])]
    local_lm = CausalLM.load(device="cpu")
    started = time.perf_counter()

    def served_franq(url, in_flight):
        cfg = FranqConfig.from_dict({**BASE, "model": {"server": url, "tokenizer": "embedded", "in_flight": in_flight,
                                                       "timeout": 1800}})
        return Franq(cfg, connect(cfg.model))

    control = None
    if a.f32_agree:
        f32 = tmp / "f32.gguf"
        f32_gguf(embedded_gguf_path(), f32)
        with LlamaServer(a.llama_python, f32, log=tmp / "server-f32.log") as url:
            control = agreement(served_franq(url, 1).lm, local_lm, examples[:1 + a.f32_agree])
        f32.unlink()
        print("f32", json.dumps(control), flush=True)
    with LlamaServer(a.llama_python, embedded_gguf_path(), log=tmp / "server.log") as url:
        f4, f1 = served_franq(url, 4), served_franq(url, 1)
        agree = agreement(f1.lm, local_lm, examples)
        print("q4_1", json.dumps(agree), flush=True)
        if a.agreement_only:
            return
        cost = pass_cost(url, local_lm, parse_example(json.loads(lines[0]), "line 0"))
        print("cost", json.dumps(cost), flush=True)
        local = Franq(FranqConfig.from_dict(BASE), local_lm)
        runs = {"served-4": f4, "served-1": f1, "local": local}
        times = {k: [] for k in runs}
        blocked, sent = [], []
        order = ["served-4", "served-1", "local"]
        for tag in order if a.once else order + order[::-1]:
            fr = runs[tag]
            client = getattr(fr.lm, "client", None)
            before = (client.blocked_seconds, client.requests_sent) if client else (0.0, 0)
            times[tag].append(timed(fr, src, tmp, tag))
            if tag == "served-1":
                blocked.append(client.blocked_seconds - before[0])
                sent.append(client.requests_sent - before[1])
            print(tag, f"{times[tag][-1]:.1f}s", flush=True)
        import httpx
        with httpx.Client(base_url=url) as http:
            rtt = []
            for _ in range(50):
                t = time.perf_counter()
                http.get("/v1/models")
                rtt.append(time.perf_counter() - t)
    n = min(a.n, len(lines))
    tot = {k: sum(v) for k, v in times.items()}
    over = [(t - b) / n for t, b in zip(times["served-1"], blocked)]

    def agree_row(label, g):
        return (f"| {label} | {g['answers']} | {g['tokens']} | {g['max_abs_diff']:.3f} | {g['mean_abs_diff']:.4f} | "
                f"{g['spearman_tokens']:.4f} | {g['spearman_answer_means']:.4f} | {g['sum_abs_diff_max']:.2f} |")

    llama = Path(a.llama_python).absolute()  # the command names the interpreter as this checkout sees it
    here = Path(__file__).resolve().parents[1]
    llama = llama.relative_to(here) if llama.is_relative_to(here) else a.llama_python
    command = (f"nice -n 5 python benchmarks/bench_served.py --llama-python {llama} --input {a.input} "
               f"--n {a.n} --agree {a.agree} --f32-agree {a.f32_agree}" + (" --once" if a.once else ""))
    rows = [
        "# Scoring with a served model (llama-cpp-python server, embedded SmolLM2 GGUF, CPU)",
        "",
        f"Command: `{command}` ({(time.perf_counter() - started) / 60:.0f} min).",
        "",
        "No GPU was lent to this task, so the \"bigger model on a GPU\" target was not run. The server",
        "(llama-cpp-python 0.3.36, one thread) and franq (one torch thread) shared a 2-core CPU with",
        "other jobs running at the same time: read the ratios, not the seconds.",
        "",
        "## Agreement with the local pass of the same GGUF",
        "",
        "p(c|x,r) and p(c|x), token by token (both conditions), served vs franq's local float32 pass",
        "of the de-quantised weights. The F32 row serves an F32 copy of the same GGUF: what differs",
        "there is not quantisation; what the Q4_1 row adds is llama.cpp computing with the quantised",
        "weights and 8-bit activations.",
        "",
        "| server's GGUF | answers | tokens | max abs diff | mean abs diff | Spearman (tokens) | "
        "Spearman (answer means) | max abs diff of an answer's sum |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        agree_row("Q4_1 (the embedded one)", agree),
    ]
    if agree.get("alike"):
        rows.append(agree_row("Q4_1, answers tokenized alike", agree["alike"]))
    if control:
        rows.append(agree_row("F32 copy (control)", control))
    if agree["realigned"]:
        rows += ["", f"Split otherwise by the server's tokenizer, read by stretches (franq/lm/served/llama_cpp.py): "
                     f"{len(agree['realigned'])} of {agree['answers']} answers (numbers {agree['realigned']}; "
                     f"0 is the bundled example)."]
    for label, g in (("Q4_1", agree), ("F32", control or {"refused": []})):
        for why in g["refused"]:
            rows += ["", f"Refused on the {label} server (not in its row): {why}"]
    rows += [
        "",
        f"## Throughput, `franq score` over {n} ExpertQA answers "
        f"({'A B C: each variant once' if a.once else 'A B C C B A: each variant twice'})",
        "",
        "| variant | seconds (runs) | answers/s | vs served, 1 in flight |",
        "| --- | --- | --- | --- |",
    ]
    for k, label in (("served-4", "served, 4 in flight"), ("served-1", "served, 1 in flight"),
                     ("local", "in-process model")):
        rows.append(f"| {label} | {tot[k]:.1f} ({', '.join(f'{x:.1f}' for x in times[k])}) | "
                    f"{len(times[k]) * n / tot[k]:.3f} | {tot['served-1'] / tot[k]:.2f}x |")
    rows += [
        "",
        f"4 vs 1 in flight: {tot['served-1'] / tot['served-4']:.2f}x; served (4 in flight) vs in-process: "
        f"{tot['local'] / tot['served-4']:.2f}x (above 1 = the server is faster).",
        f"Requests per answer: {statistics.mean(sent) / n:.1f} (one per condition, all claims of an answer in one).",
        "",
        "## Where the time goes",
        "",
        f"Inside the server, one p(c|x,r) pass of {cost['tokens']} tokens: the forward {cost['forward']:.2f} s "
        f"(a request without echo), the echo reply {cost['echo_cached']:.2f} s with the prompt already cached "
        f"(llama-cpp-python builds it in Python: a sort of the whole vocabulary and a detokenisation of the "
        f"prefix per prompt token); franq's in-process pass: {cost['local']:.2f} s.",
        "",
        f"franq's own time per answer beyond the server (wall minus the time blocked on it, 1 in flight): "
        f"{statistics.mean(over) * 1000:.0f} ms (runs: {', '.join(f'{x * 1000:.0f}' for x in over)} ms): "
        f"decomposition, prompts and tokenizing, faithfulness and output, which the in-process run pays too.",
        f"HTTP round trip of an empty request: median {statistics.median(rtt) * 1000:.1f} ms, so "
        f"{2 * statistics.median(rtt) * 1000:.1f} ms per answer for its two requests.",
        "",
    ]
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(rows), encoding="utf-8")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
