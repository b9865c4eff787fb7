"""The one OpenAI-compatible client factory, for franq: :func:`claims.openai_client.openai_client`
(it lives in ``claims/`` because the LLM decomposer's chat backend needs it and ``claims/``
never imports ``franq/``), with the key variable registered for franq's redaction of logs,
errors and outputs (:func:`franq.errors.redact`), the URL parsed once as the served client
parses it (:func:`franq.lm.served.client.server_url`), retries bounded by the ``retries``
limit, and a bad setting as an :class:`InputError` naming who asked."""
from __future__ import annotations

from claims.openai_client import DEFAULT_KEY_ENV, DEFAULT_RETRIES, DEFAULT_TIMEOUT, NO_KEY, redact_key, server_name
from claims.openai_client import openai_client as _openai_client
from franq.errors import InputError, register_secret_env

__all__ = ["DEFAULT_KEY_ENV", "NO_KEY", "openai_client", "redact_key", "server_name"]


def openai_client(base_url: str | None = None, *, api_key_env: str = DEFAULT_KEY_ENV,
                  timeout: float = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_RETRIES, where: str = "server",
                  limits=None):
    """An ``openai.OpenAI`` client for ``base_url`` (see :func:`claims.openai_client.openai_client`);
    ``where`` starts the message of an :class:`InputError` for a bad setting or a missing key.
    The URL: ``http(s)://host[:port][/path]``, an IPv6 host in brackets, a port in 1-65535;
    ``max_retries`` at most the ``retries`` limit (of ``limits``, else the default)."""
    from franq.limits import LIMITS
    from franq.lm.served.client import server_url

    register_secret_env(api_key_env)
    if base_url is not None:
        base_url = server_url(base_url, f"{where}: base_url")
    cap = int((limits or {}).get("retries", LIMITS["retries"].default))
    try:
        return _openai_client(base_url, api_key_env=api_key_env, timeout=timeout, max_retries=max_retries,
                              max_retries_cap=cap)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None
