"""The one way franq builds a client for an OpenAI-compatible server (vLLM, Ollama,
llama.cpp server, OpenAI): base URL, API key variable, timeout, retries with backoff, and
the key kept out of errors and logs.

It lives in ``claims/`` because the LLM decomposer's chat backend (:mod:`claims.chat`)
needs it and ``claims/`` never imports ``franq/``; :mod:`franq.lm.openai_client`
re-exports it for the rest of franq (and registers the key variable with franq's log
redaction).

The key is read from the environment variable ``api_key_env`` when the client is made
and handed to the ``openai`` client; franq never stores it, never logs it, and
:func:`redact_key` masks it in any message built from a server error. A local server
ignores the key, so a missing variable is an error only for the OpenAI API itself
(``base_url`` None); local servers get the placeholder :data:`NO_KEY`.
"""
from __future__ import annotations

import math
import os
import time

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
NO_KEY = "not-needed"
"""The key sent to a server when ``api_key_env`` is unset (local servers accept any)."""
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
REPLY_BYTES = 64 * 2**20
"""The most bytes one reply may hold (franq's ``reply_bytes`` limit has the same default)."""
MAX_RETRIES = 10
"""The most retries a client may be given (franq's ``retries`` limit has the same default)."""


def openai_client(base_url: str | None = None, *, api_key_env: str = DEFAULT_KEY_ENV,
                  timeout: float = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_RETRIES,
                  max_retries_cap: int = MAX_RETRIES, reply_bytes: int = REPLY_BYTES):
    """An ``openai.OpenAI`` client for the server at ``base_url`` (``None``: the OpenAI API).

    ``timeout``: seconds per try, in all (connecting, sending, reading the whole reply: a
    server that drips a byte a second does not hold it longer); ``max_retries``: how often the client retries a
    timeout, a connection error, HTTP 408/409/429 or 5xx, with exponential backoff and
    jitter (0: the caller retries itself, as :class:`claims.chat.OpenAIChat` does to count
    calls; at most ``max_retries_cap``). Redirects are not followed (a server that sends one is
    an error, never another host); a reply is read uncompressed and at most ``reply_bytes``. Raises ``ValueError`` naming the setting for a bad value or
    a missing key.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise ValueError(f"timeout: expected a finite number of seconds > 0, got {timeout!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or not 0 <= max_retries <= max_retries_cap:
        raise ValueError(f"max_retries: expected a whole number in [0, {max_retries_cap}], got {max_retries!r}")
    key = os.environ.get(api_key_env)
    if not key:
        if base_url is None:
            raise ValueError(f"api_key_env: environment variable {api_key_env} is not set "
                             "(needed for the OpenAI API; local servers need no key)")
        key = NO_KEY
    import openai

    http = openai.DefaultHttpxClient(follow_redirects=False, timeout=timeout,
                                     transport=_bounded_transport(openai.DefaultHttpxClient, timeout, reply_bytes))
    return openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=max_retries, http_client=http)


def _bounded_transport(client_class, timeout: float, reply_bytes: int):
    """A transport of the HTTP library ``client_class`` is built on (httpx, or the fork newer
    ``openai`` releases use) that holds each exchange to one deadline and a byte cap: each
    chunk of the reply is checked as it arrives, so neither a drip nor an endless reply
    outlasts them; replies are asked uncompressed, and a compressed one is refused."""
    import sys

    http = sys.modules[next(c for c in client_class.__mro__ if c.__name__ == "Client").__module__.split(".")[0]]

    class Bounded(http.SyncByteStream):
        def __init__(self, stream, deadline: float, request):
            self.stream, self.deadline, self.request = stream, deadline, request

        def __iter__(self):
            got = 0
            for chunk in self.stream:
                got += len(chunk)
                if time.monotonic() > self.deadline:
                    raise http.ReadTimeout(f"no complete reply within {timeout:g} s", request=self.request)
                if got > reply_bytes:
                    raise http.ReadError(f"the reply is over {reply_bytes} bytes", request=self.request)
                yield chunk

        def close(self):
            self.stream.close()

    class Transport(http.HTTPTransport):
        def handle_request(self, request):
            deadline = time.monotonic() + timeout
            request.headers["accept-encoding"] = "identity"
            response = super().handle_request(request)
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                response.close()
                raise http.DecodingError(f"the reply is encoded as {encoding[:40]!r} though franq asked for none",
                                         request=request)
            response.stream = Bounded(response.stream, deadline, request)
            return response

    return Transport()


def redact_key(text: str, api_key_env: str = DEFAULT_KEY_ENV) -> str:
    """``text`` with the value of ``api_key_env`` (if set) masked, whatever its length (a
    three-character key is a key too; the text is a message built from a server error)."""
    key = os.environ.get(api_key_env)
    if key and isinstance(text, str):
        return text.replace(key, f"<{api_key_env} redacted>")
    return text


def server_name(model: str, base_url: str | None) -> str:
    """``openai:MODEL@URL``: how results and errors name a model behind a server."""
    return f"openai:{model}@{base_url or 'api.openai.com'}"
