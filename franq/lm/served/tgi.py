"""Hugging Face text-generation-inference (TGI).

Passes: ``POST /generate`` takes text only: ``inputs`` is the prompt + answer as the local
tokenizer decodes them, with ``parameters.details`` and ``decoder_input_details``:
``details.prefill`` lists ``{"id", "text", "logprob"}`` for every input token (the first
logprob is null). The answer's tokens are the last ones and are checked against the local
ids. Samples: TGI returns one sequence per request (``best_of`` keeps only the best), so
``n`` samples are ``n`` requests with ``do_sample`` and seeds ``seed + i``; each reply's
``details.tokens`` holds ``{"id", "text", "logprob", "special"}``.
"""
from __future__ import annotations

from franq.lm.served.base import (Draw, Engine, ScoreItem, as_dict, as_list, check_ids, field, finish, logprob, tail,
                                  text, token_id)
from franq.lm.served.client import Request


class TGI(Engine):
    name = "tgi"
    prompt_param = "decoder_input_details"
    n_per_request = False

    def score_request(self, item: ScoreItem) -> Request:
        return Request("POST", "/generate", {"inputs": item.prompt_text + item.answer_text, "parameters": {
            "max_new_tokens": 1, "details": True, "decoder_input_details": True}})

    def read_score(self, body, item: ScoreItem) -> list[float]:
        if isinstance(body, list):
            body = body[0] if body else {}
        rows = tail(field(body, "details", "prefill", engine=self), len(item.answer_ids), self, "details.prefill")
        check_ids([r.get("id") if isinstance(r, dict) else None for r in rows], item, self)
        return [logprob(r.get("logprob"), self, f"details.prefill[{t}].logprob") for t, r in enumerate(rows)]

    def sample_requests(self, prompt_ids, prompt_text, p) -> list[Request]:
        out = []
        for i in range(p.n):
            params = {"max_new_tokens": p.max_tokens, "details": True}
            if p.temperature > 0:
                params.update(do_sample=True, temperature=p.temperature)
                if p.top_p < 1:
                    params["top_p"] = p.top_p
                if p.top_k:
                    params["top_k"] = p.top_k
                if p.seed is not None:
                    params["seed"] = p.seed + i
            out.append(Request("POST", "/generate", {"inputs": prompt_text, "parameters": params}))
        return out

    def read_samples(self, bodies) -> list[Draw]:
        out = []
        for k, body in enumerate(bodies):
            if isinstance(body, list):
                body = body[0] if body else {}
            details = as_dict(field(body, "details", engine=self), self, f"[{k}].details")
            tokens = [as_dict(t, self, f"[{k}].details.tokens[{i}]")
                      for i, t in enumerate(as_list(field(details, "tokens", engine=self), self, f"[{k}].details.tokens"))]
            kept = [(i, t) for i, t in enumerate(tokens) if not t.get("special")]
            out.append(Draw(text(field(body, "generated_text", engine=self), self, f"[{k}].generated_text"),
                            tuple(str(t.get("text", "")) for _, t in kept),
                            tuple(logprob(t.get("logprob"), self, f"[{k}].details.tokens[{i}].logprob") for i, t in kept),
                            tuple(token_id(t.get("id"), self, f"[{k}].details.tokens[{i}].id") for i, t in kept),
                            finish(details.get("finish_reason"))))
        return out
