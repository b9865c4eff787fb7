"""llama-cpp-python's server (``python -m llama_cpp.server --model M.gguf``; its
``logits_all`` setting, on by default, must stay on).

Passes: ``POST /v1/completions`` takes text (its ``prompt`` is a string): the prompt +
answer as the local tokenizer decodes them, with ``echo=true, logprobs=1, max_tokens=1``:
``choices[0].logprobs`` has ``tokens`` (each token's text), ``token_logprobs`` (the first
null) and ``text_offset`` for the prompt and the one generated token. The answer is the
run of tokens before the generated one whose texts join to the answer text (checked).
Samples: the server ignores ``n``, so ``n`` requests with seeds ``seed + i``.
"""
from __future__ import annotations

from franq.lm.served.base import Draw, Engine, ScoreItem, field, finish, logprob
from franq.lm.served.client import Request


class LlamaCpp(Engine):
    name = "llama-cpp-python"
    prompt_param = "echo with logprobs (logits_all)"
    n_per_request = False

    def score_request(self, item: ScoreItem) -> Request:
        return Request("POST", "/v1/completions", {**self._model(), "prompt": item.prompt_text + item.answer_text,
                                                   "echo": True, "logprobs": 1, "max_tokens": 1,
                                                   "temperature": 0.0})

    def read_score(self, body, item: ScoreItem) -> list[float]:
        lp = field(body, "choices", 0, "logprobs", engine=self)
        if not isinstance(lp, dict):
            raise self.fail("choices[0].logprobs is null: start the server with logits_all on")
        tokens, lps = field(lp, "tokens", engine=self), field(lp, "token_logprobs", engine=self)
        n = len(item.answer_ids)
        end = len(tokens) - (1 if len(tokens) > 1 else 0)  # the one generated token comes last
        if len(field(body, "choices", 0, "text", engine=self)) <= len(item.prompt_text + item.answer_text):
            end = len(tokens)  # nothing was generated (EOS straight away)
        if end - n < 1 or "".join(tokens[end - n:end]) != item.answer_text:
            raise self.fail(f"the server's tokens of the answer ({''.join(tokens[max(end - n, 0):end])!r}) are not "
                            f"the local tokenizer's; set [model] tokenizer to the served model's tokenizer")
        return [logprob(x, self, f"choices[0].logprobs.token_logprobs[{end - n + t}]")
                for t, x in enumerate(lps[end - n:end])]

    def sample_requests(self, prompt_ids, prompt_text, p) -> list[Request]:
        out = []
        for i in range(p.n):
            payload = {**self._model(), "prompt": prompt_text, "max_tokens": p.max_tokens,
                       "temperature": p.temperature, "top_p": p.top_p, "top_k": p.top_k, "logprobs": 1}
            if p.seed is not None:
                payload["seed"] = p.seed + i
            out.append(Request("POST", "/v1/completions", payload))
        return out

    def read_samples(self, bodies) -> list[Draw]:
        out = []
        for k, body in enumerate(bodies):
            choice = field(body, "choices", 0, engine=self)
            lp = choice.get("logprobs") or {}
            lps = [logprob(x, self, f"[{k}].choices[0].logprobs.token_logprobs") for x in lp.get("token_logprobs") or []]
            out.append(Draw(str(field(choice, "text", engine=self)), tuple(map(str, lp.get("tokens") or [])),
                            tuple(lps), None, finish(choice.get("finish_reason"))))
        return out
