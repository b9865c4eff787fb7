"""The one OpenAI-compatible client factory, for franq: :func:`claims.openai_client.openai_client`
(it lives in ``claims/`` because the LLM decomposer's chat backend needs it and ``claims/``
never imports ``franq/``), with the key variable registered for franq's redaction of logs,
errors and outputs (:func:`franq.errors.redact`) and a bad setting as an :class:`InputError`
naming who asked."""
from __future__ import annotations

from claims.openai_client import DEFAULT_KEY_ENV, DEFAULT_RETRIES, DEFAULT_TIMEOUT, NO_KEY, redact_key, server_name
from claims.openai_client import openai_client as _openai_client
from franq.errors import InputError, register_secret_env

__all__ = ["DEFAULT_KEY_ENV", "NO_KEY", "openai_client", "redact_key", "server_name"]


def openai_client(base_url: str | None = None, *, api_key_env: str = DEFAULT_KEY_ENV,
                  timeout: float = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_RETRIES, where: str = "server"):
    """An ``openai.OpenAI`` client for ``base_url`` (see :func:`claims.openai_client.openai_client`);
    ``where`` starts the message of an :class:`InputError` for a bad setting or a missing key."""
    register_secret_env(api_key_env)
    try:
        return _openai_client(base_url, api_key_env=api_key_env, timeout=timeout, max_retries=max_retries)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None
