"""SGLang's native server (``python -m sglang.launch_server``).

Passes: ``POST /generate`` with ``input_ids``, ``sampling_params.max_new_tokens=1``,
``return_logprob=true`` and ``logprob_start_len`` at the last prompt token:
``meta_info.input_token_logprobs`` lists ``[logprob, token_id, text|null]`` for the input
tokens from there on (the first may be null). Samples: the same route with
``sampling_params.n``; a reply per sample (a list when n > 1), each with
``meta_info.output_token_logprobs`` and ``meta_info.finish_reason.type``.
(SGLang's OpenAI route rejects ``echo`` with ``logprobs``, so franq uses the native one.)
"""
from __future__ import annotations

from franq.lm.served.base import (Draw, Engine, ScoreItem, as_dict, as_list, check_ids, field, finish, logprob, tail,
                                  text, token_id)
from franq.lm.served.client import Request


class SGLang(Engine):
    name = "sglang"
    prompt_param = "return_logprob with logprob_start_len"

    def score_request(self, item: ScoreItem) -> Request:
        return Request("POST", "/generate", {
            "input_ids": item.ids, "sampling_params": {"max_new_tokens": 1, "temperature": 0.0},
            "return_logprob": True, "logprob_start_len": max(len(item.prompt_ids) - 1, 0)})

    def read_score(self, body, item: ScoreItem) -> list[float]:
        if isinstance(body, list):
            body = body[0] if body else {}
        rows = tail(field(body, "meta_info", "input_token_logprobs", engine=self), len(item.answer_ids), self,
                    "meta_info.input_token_logprobs")
        if any(not isinstance(r, (list, tuple)) or len(r) < 2 for r in rows):
            raise self.fail("meta_info.input_token_logprobs: expected [logprob, token_id, text] entries")
        check_ids([r[1] for r in rows], item, self)
        return [logprob(r[0], self, f"input_token_logprobs[{t}]") for t, r in enumerate(rows)]

    def sample_requests(self, prompt_ids, prompt_text, p) -> list[Request]:
        params = {"n": p.n, "max_new_tokens": p.max_tokens, "temperature": p.temperature, "top_p": p.top_p,
                  "top_k": p.top_k if p.top_k else -1}
        if p.seed is not None:
            params["sampling_seed"] = p.seed
        return [Request("POST", "/generate", {"input_ids": list(prompt_ids), "sampling_params": params,
                                              "return_logprob": True, "return_text_in_logprobs": True})]

    def read_samples(self, bodies) -> list[Draw]:
        out = []
        for body in bodies:
            for k, one in enumerate(body if isinstance(body, list) else [body]):
                where = f"[{k}].meta_info.output_token_logprobs"
                meta = as_dict(field(one, "meta_info", engine=self), self, f"[{k}].meta_info")
                rows = as_list(field(meta, "output_token_logprobs", engine=self), self, where)
                for t, r in enumerate(rows):
                    if not isinstance(r, list) or len(r) < 2:
                        raise self.fail(f"{where}[{t}]: expected [logprob, token_id, text], got {str(r)[:60]}")
                lps = [logprob(r[0], self, f"{where}[{t}][0]") for t, r in enumerate(rows)]
                ids = tuple(token_id(r[1], self, f"{where}[{t}][1]") for t, r in enumerate(rows))
                texts = tuple(str(r[2]) if len(r) > 2 and r[2] is not None else "" for r in rows)
                out.append(Draw(text(field(one, "text", engine=self), self, f"[{k}].text"), texts, tuple(lps), ids,
                                finish(meta.get("finish_reason"))))
        return out
