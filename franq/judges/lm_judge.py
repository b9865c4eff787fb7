"""The local causal LM as equivalence judge.

For each unordered pair of distinct answers the LM is asked whether, as answers to the
question, they mean the same; ``P = p(yes) / (p(yes) + p(no))`` from the next-token
distribution after the prompt (one forward pass per pair, pairs batched, left-padded).
The judgement is symmetric, so ``P(a entails b) = P(b entails a) = P(same)``. Costs
``u (u - 1) / 2`` prompt passes for ``u`` unique answers.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from franq.judges.base import expand, unique_pairs

JUDGE_PROMPT = ("Question: {question}\nAnswer A: {a}\nAnswer B: {b}\n"
                "Do Answer A and Answer B mean the same thing? Reply yes or no.")


class LMJudge:
    def __init__(self, lm, *, batch_size: int = 16):
        self.lm = lm
        self.batch_size = batch_size
        self.name = f"lm-judge:{lm.name}"
        self._yes = [lm.encode(w)[0] for w in ("yes", "Yes")]
        self._no = [lm.encode(w)[0] for w in ("no", "No")]

    def _prompt_ids(self, question: str, a: str, b: str) -> list[int]:
        body = JUDGE_PROMPT.format(question=question, a=a, b=b)
        tok = self.lm.tokenizer
        if getattr(tok, "chat_template", None):
            text = tok.apply_chat_template([{"role": "user", "content": body}], tokenize=False,
                                           add_generation_prompt=True)
        else:
            text = body + "\n"
        return self.lm.encode(text)

    @torch.inference_mode()
    def _p_yes(self, prompts: list[list[int]]) -> np.ndarray:
        lm, out = self.lm, []
        for start in range(0, len(prompts), self.batch_size):
            batch = prompts[start:start + self.batch_size]
            width = max(map(len, batch))
            ids = torch.full((len(batch), width), lm.pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, p in enumerate(batch):
                ids[r, width - len(p):] = torch.tensor(p)
                mask[r, width - len(p):] = 1
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            kw = {"logits_to_keep": 1} if lm._keep_arg else {}
            logits = lm.model(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device),
                              position_ids=pos.to(lm.device), use_cache=False, **kw).logits[:, -1].float()
            lp = torch.log_softmax(logits, dim=-1)
            yes = torch.logsumexp(lp[:, self._yes], dim=-1)
            no = torch.logsumexp(lp[:, self._no], dim=-1)
            out.append(torch.sigmoid(yes - no).double().cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0)

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        uniq, inv, pairs = unique_pairs(texts)
        m = np.eye(len(uniq))
        pairs = [(a, b) for a, b in pairs if a < b]
        if pairs:
            p = self._p_yes([self._prompt_ids(question, uniq[a], uniq[b]) for a, b in pairs])
            for (a, b), v in zip(pairs, p):
                m[a, b] = m[b, a] = v
        return expand(m, inv)
