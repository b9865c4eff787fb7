"""LocalChat: a :class:`~claims.chat.ChatModel` on a local :class:`~franq.lm.model.CausalLM`
(the embedded model or any transformers model), so LLM decomposition needs no server."""
from __future__ import annotations

import threading

from claims.chat import ChatError, ChatReply, OpenAIChat  # noqa: F401 - OpenAIChat: the server client, for applications
from franq.lm.model import CausalLM
from franq.lm.prompts import chat_text


class LocalChat:
    """Greedy (temperature 0) chat completions from a loaded causal LM.

    ``response_prefix`` is put at the start of the model's turn and of the returned text
    (e.g. ``'["'``): it steers a small model into the JSON list the decomposer expects
    (a "prefill", which OpenAI-compatible servers do not all offer).

    Calls are serialized: one model, one forward at a time. A prompt that does not fit
    the model's context raises :class:`~claims.chat.ChatError`, which the decomposer turns
    into a fallback with a warning.
    """

    def __init__(self, lm: CausalLM, *, response_prefix: str = ""):
        self.lm = lm
        self.response_prefix = response_prefix
        self.name = f"local:{lm.name}" + (f"+prefix:{response_prefix}" if response_prefix else "")
        self._lock = threading.Lock()

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int = 1024) -> ChatReply:
        text = chat_text(self.lm.tokenizer, messages, fallback="\n\n".join(m["content"] for m in messages) + "\n")
        text += self.response_prefix
        ids = self.lm.encode(text)
        room = self.lm.max_context - len(ids)
        if room < 16:
            raise ChatError(f"{self.name}: the decomposition prompt ({len(ids)} tokens) does not fit "
                            f"the model context of {self.lm.max_context} tokens")
        with self._lock:
            gen = self.lm.generate(ids, max_new_tokens=min(max_tokens, room))
        return ChatReply(self.response_prefix + gen.text, len(ids), len(gen.token_ids), 1)
