"""vLLM's OpenAI-compatible server (``vllm serve``).

Passes: ``POST /v1/completions`` with the token ids as ``prompt``, ``max_tokens=1`` and
vLLM's extra parameter ``prompt_logprobs=0``: ``choices[0].prompt_logprobs`` holds, for
each prompt token after the first, ``{"<token id>": {"logprob", "rank", "decoded_token"}}``
(the token itself is always included). Samples: the same route with ``n``, ``logprobs=0``,
``seed`` and ``return_tokens_as_token_ids`` (tokens come back as ``"token_id:<id>"``).
"""
from __future__ import annotations

from franq.lm.served.base import (Draw, Engine, ScoreItem, as_dict, as_list, check_ids, field, finish, logprob, logprobs,
                                  tail, text)
from franq.lm.served.client import Request


class VLLM(Engine):
    name = "vllm"
    prompt_param = "prompt_logprobs"

    def score_request(self, item: ScoreItem) -> Request:
        return Request("POST", "/v1/completions", {**self._model(), "prompt": item.ids, "max_tokens": 1,
                                                   "temperature": 0.0, "prompt_logprobs": 0})

    def read_score(self, body, item: ScoreItem) -> list[float]:
        rows = tail(field(body, "choices", 0, "prompt_logprobs", engine=self), len(item.answer_ids), self,
                    "choices[0].prompt_logprobs")
        out = []
        for t, (tok, row) in enumerate(zip(item.answer_ids, rows)):
            entry = row.get(str(tok)) if isinstance(row, dict) else None
            if not isinstance(entry, dict):
                raise self.fail(f"choices[0].prompt_logprobs: no entry for answer token {t} (id {tok})")
            out.append(logprob(entry.get("logprob"), self, f"prompt_logprobs[{t}].logprob"))
        choice = as_dict(body["choices"][0], self, "choices[0]")
        got = choice.get("prompt_token_ids") or body.get("prompt_token_ids")  # where vLLM echoes them
        if got:
            check_ids(tail(list(got), len(item.answer_ids), self, "prompt_token_ids"), item, self)
        return out

    def sample_requests(self, prompt_ids, prompt_text, p) -> list[Request]:
        payload = {**self._model(), "prompt": list(prompt_ids), "n": p.n, "max_tokens": p.max_tokens,
                   "temperature": p.temperature, "top_p": p.top_p, "logprobs": 0,
                   "return_tokens_as_token_ids": True}
        if p.top_k:
            payload["top_k"] = p.top_k
        if p.seed is not None:
            payload["seed"] = p.seed
        return [Request("POST", "/v1/completions", payload)]

    def read_samples(self, bodies) -> list[Draw]:
        out = []
        for body in bodies:
            for k, choice in enumerate(as_list(field(body, "choices", engine=self), self, "choices")):
                where = f"choices[{k}]"
                choice = as_dict(choice, self, where)
                lp = as_dict(field(choice, "logprobs", engine=self) or {}, self, f"{where}.logprobs")
                tokens = as_list(lp.get("tokens") or [], self, f"{where}.logprobs.tokens")
                lps = logprobs(lp.get("token_logprobs") or [], self, f"{where}.logprobs.token_logprobs")
                if len(tokens) != len(lps):
                    raise self.fail(f"{where}.logprobs: {len(tokens)} tokens but {len(lps)} token_logprobs")
                ids = None
                if tokens and all(isinstance(t, str) and t.startswith("token_id:") for t in tokens):
                    try:
                        ids = tuple(int(t.split(":", 1)[1]) for t in tokens)
                    except ValueError:
                        raise self.fail(f"{where}.logprobs.tokens: a 'token_id:' entry without a number") from None
                out.append(Draw(text(field(choice, "text", engine=self), self, f"{where}.text"),
                                tuple(map(str, tokens)), tuple(lps), ids, finish(choice.get("finish_reason"))))
        return out
