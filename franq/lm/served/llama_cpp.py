"""llama-cpp-python's server (``python -m llama_cpp.server --model M.gguf --logits_all true``).

Passes: ``POST /v1/completions`` takes text (its ``prompt`` is a string): the prompt +
answer as the local tokenizer decodes them, with ``echo=true, logprobs=1, max_tokens=1``.
What its reply holds (read in llama_cpp/llama.py ``_create_completion``, 0.3.x, and
pinned from a real server in tests/fixtures/served/llama-cpp-python-real.json):

- ``choices[0].logprobs.tokens`` / ``token_logprobs``: one entry per prompt token, then
  the generated one when there is one (``usage.completion_tokens``: 0 when the model
  stops at once), with a leading BOS token dropped and every other BOS token skipped;
  the first entry's log-probability is null. ``text_offset`` counts characters of the
  text without special tokens, so franq does not use it.
- The log-probability of entry ``i`` is read from the model's scores at position ``i``
  of the prompt *with* its BOS: so they are the token's own (given what precedes it)
  only when the prompt starts with the BOS token; otherwise each is one token off (the
  score of token ``i`` under the distribution that predicts token ``i + 1``). The adapter
  therefore sends every prompt starting with exactly one BOS: it adds the BOS text where
  the prompt lacks it and the server does not add one itself (chat prompts of templates
  that start with BOS, SmolLM2's and Llama 3's, are sent unchanged), and drops it where
  the server adds its own (``/extras/tokenize`` says which, at start-up).
- The answer's entries are matched to the local tokenizer's tokens by their text. The
  prompt may be split otherwise (the model reads the same text), and so may the answer:
  llama.cpp's pre-tokenizer is not always transformers' reading of the same GGUF (for
  SmolLM2, "\n\n" before a digit is one token on the server and two locally, in 2 of 20
  ExpertQA answers). Where they differ, each stretch of the answer between character
  boundaries both tokenizations share gets the server's log-probability of that stretch
  (the sum over its tokens), spread evenly over the local tokens in it: a claim's sum is
  exact whenever its ends are shared boundaries (for SmolLM2 the stretches are the
  whitespace between list items, outside every claim). An answer whose text the server
  echoes otherwise, or whose first token the server merges into the prompt's last, is
  refused, naming the first token that differs.

Samples: the server ignores ``n``, so ``n`` requests with seeds ``seed + i``, with its
sampling extras (``min_p`` 0.05, ``repeat_penalty`` 1.1 by default) set to neutral, so a
sample is drawn from the model's distribution as the in-process sampler draws it.
"""
from __future__ import annotations

from franq.lm.served.base import Draw, Engine, ScoreItem, as_dict, as_list, field, finish, logprob, logprobs, text
from franq.lm.served.client import Request

PROBE_TEXT = "Paris is the capital"


class LlamaCpp(Engine):
    name = "llama-cpp-python"
    prompt_param = "echo with logprobs (logits_all)"
    n_per_request = False

    def __init__(self, model: str | None = None):
        super().__init__(model)
        self.bos_text: str | None = None
        self.bos_id: int | None = None
        self.adds_bos = False
        self.no_bos: str | None = None
        self._piece = None
        self.realigned = 0  # answers whose tokens the server split otherwise (read by stretches)

    def setup(self, client, tokenizer) -> None:
        """Learn the BOS token (the local tokenizer's) and whether the server adds one itself
        (``/extras/tokenize`` of a short text: the local tokens with one more in front)."""
        self.bos_id = tokenizer.bos_token_id
        self.bos_text = tokenizer.bos_token if self.bos_id is not None else None
        self._piece = lambda i: tokenizer.decode([i], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        reply, _ = client.try_post(Request("POST", "/extras/tokenize", {**self._model(), "input": PROBE_TEXT}))
        got = reply.get("tokens") if isinstance(reply, dict) else None
        local = tokenizer.encode(PROBE_TEXT, add_special_tokens=False)
        self.adds_bos = isinstance(got, list) and len(got) == len(local) + 1 and got[1:] == local
        if self.bos_text is None and not self.adds_bos:
            self.no_bos = ("the tokenizer names no BOS token and the server adds none, so its echo log-probabilities "
                           "would be one token off (llama-cpp-python reads token i's from position i of a prompt "
                           "that starts with BOS); set [model] tokenizer to one that names the model's BOS token")

    def _prompt(self, text: str) -> tuple[str, int]:
        """The text to send, and the tokens the server reads more (+1) than the local ids."""
        bos = self.bos_text
        if self.adds_bos:
            return (text[len(bos):], 0) if bos and text.startswith(bos) else (text, 1)
        if bos is None:
            return text, 0
        return (text, 0) if text.startswith(bos) else (bos + text, 1)

    def score_request(self, item: ScoreItem) -> Request:
        if self.no_bos:
            raise self.fail(self.no_bos)
        prompt, _ = self._prompt(item.prompt_text + item.answer_text)
        return Request("POST", "/v1/completions", {**self._model(), "prompt": prompt, "echo": True, "logprobs": 1,
                                                   "max_tokens": 1, "temperature": 0.0})

    def read_score(self, body, item: ScoreItem) -> list[float]:
        lp = field(body, "choices", 0, "logprobs", engine=self)
        if not isinstance(lp, dict):
            raise self.fail("choices[0].logprobs is null: start the server with --logits_all true")
        tokens = as_list(field(lp, "tokens", engine=self), self, "choices[0].logprobs.tokens")
        lps = as_list(field(lp, "token_logprobs", engine=self), self, "choices[0].logprobs.token_logprobs")
        if len(tokens) != len(lps):
            raise self.fail(f"choices[0].logprobs: {len(tokens)} tokens but {len(lps)} token_logprobs")
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        generated = usage.get("completion_tokens")
        if not isinstance(generated, int) or isinstance(generated, bool):  # no usage: judge by the echoed text
            generated = int(len(field(body, "choices", 0, "text", engine=self)) > len(item.prompt_text + item.answer_text))
        end = len(tokens) - min(generated, 1)
        want = self._answer_pieces(item)
        pieces = [str(t).replace("\ufffd", "") for t in tokens[:end]]
        start, groups = _align(pieces, want)
        if groups is None or start < 1:
            n = len(want)
            got = pieces[max(end - n, 0):]
            k = next((t for t, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
            _, added = self._prompt(item.prompt_text + item.answer_text)
            sent = usage.get("prompt_tokens")
            counts = (f"; the server read the prompt as {sent} tokens, the local tokenizer as "
                      f"{len(item.prompt_ids) + n + added}" if isinstance(sent, int) else "")
            raise self.fail(f"the server's tokens of the answer are not the local tokenizer's from answer token {k} "
                            f"(server {got[k:k + 3]}, local {want[k:k + 3]}){counts}, and the texts differ: "
                            f"set [model] tokenizer to the served model's")
        served = [logprob(x, self, f"choices[0].logprobs.token_logprobs[{start + t}]")
                  for t, x in enumerate(lps[start:end])]
        if any(n_local != 1 or span.stop - span.start != 1 for n_local, span in groups):
            self.realigned += 1
        out: list[float] = []
        for n_local, span in groups:  # a stretch both tokenizers end at: its log-probability, shared evenly
            total = sum(served[span])
            out += [total / n_local] * n_local
        return out

    def _answer_pieces(self, item: ScoreItem) -> list[str]:
        """The answer's tokens as the server spells them: each decoded alone, a piece of a
        character split across tokens dropped (the server decodes with errors='ignore')."""
        if self._piece is None:
            raise self.fail("no tokenizer: the adapter was not set up (the capability probe does it)")
        return [self._piece(i).replace("\ufffd", "") for i in item.answer_ids]

    def sample_requests(self, prompt_ids, prompt_text, p) -> list[Request]:
        prompt, _ = self._prompt(prompt_text)
        out = []
        for i in range(p.n):
            payload = {**self._model(), "prompt": prompt, "max_tokens": p.max_tokens,
                       "temperature": p.temperature, "top_p": p.top_p, "top_k": p.top_k, "min_p": 0.0,
                       "repeat_penalty": 1.0, "logprobs": 1}
            if p.seed is not None:
                payload["seed"] = p.seed + i
            out.append(Request("POST", "/v1/completions", payload))
        return out

    def read_samples(self, bodies) -> list[Draw]:
        out = []
        for k, body in enumerate(bodies):
            choice = as_dict(field(body, "choices", 0, engine=self), self, f"[{k}].choices[0]")
            lp = as_dict(choice.get("logprobs") or {}, self, f"[{k}].choices[0].logprobs")
            tokens = as_list(lp.get("tokens") or [], self, f"[{k}].choices[0].logprobs.tokens")
            lps = logprobs(lp.get("token_logprobs") or [], self, f"[{k}].choices[0].logprobs.token_logprobs")
            if len(tokens) != len(lps):
                raise self.fail(f"[{k}].choices[0].logprobs: {len(tokens)} tokens but {len(lps)} token_logprobs")
            out.append(Draw(text(field(choice, "text", engine=self), self, f"[{k}].choices[0].text"),
                            tuple(map(str, tokens)), tuple(lps), None, finish(choice.get("finish_reason"))))
        return out


def _align(server: list[str], local: list[str]) -> tuple[int, list[tuple[int, slice]] | None]:
    """Where the answer starts among the server's token pieces, and the stretches between
    the character boundaries both tokenizations share: ``(local tokens, server tokens)``
    per stretch, one to one wherever the two agree. ``(start, None)`` when the server's
    pieces do not end with the answer's text at a token boundary."""
    text = "".join(local)
    size, start = 0, len(server)
    while start > 0 and size < len(text):
        start -= 1
        size += len(server[start])
    if size != len(text) or "".join(server[start:]) != text:
        return start, None
    groups: list[tuple[int, slice]] = []
    i = j = 0
    at_i = at_j = 0  # characters covered by local[:i], server[start:start + j]
    n_server = len(server) - start
    while i < len(local) and j < n_server:
        i0, j0 = i, j
        at_i += len(local[i])
        at_j += len(server[start + j])
        i, j = i + 1, j + 1
        while at_i != at_j:
            if at_i < at_j:
                at_i += len(local[i])
                i += 1
            else:
                at_j += len(server[start + j])
                j += 1
        groups.append((i - i0, slice(j0, j)))
    if (i < len(local) or j < n_server) and not groups:  # only empty pieces: nothing to read them by
        return start, None
    if i < len(local) or j < n_server:  # empty pieces left over (a character split across tokens)
        n, span = groups[-1]
        groups[-1] = (n + len(local) - i, slice(span.start, n_server))
    return start, groups
