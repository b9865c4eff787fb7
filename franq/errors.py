"""franq's exception types (each names the field or setting that is wrong) and the one
redaction function applied to everything franq writes or prints."""
from __future__ import annotations

import os
import re


class FranqError(Exception):
    """Base class for franq's own errors."""


class InputError(FranqError, ValueError):
    """A user-supplied example, config or file is malformed; the message names the field."""


class ModelNotFoundError(FranqError, FileNotFoundError):
    """A model, checkpoint or embedded package is not where the configuration says."""


class ContextOverflowError(InputError):
    """The prompt plus answer does not fit the model's context window."""


class LabelWordsError(FranqError, ValueError):
    """A model's tokenizer cannot tell two answer words (yes / no, True / False) apart by
    their first token."""


class UpstreamTimeout(FranqError):
    """A model's server did not answer one request within its timeout: that record's error (a
    batch carries on; the service answers 504), not an outage."""

    upstream_timeout = True


class OutputWriteError(FranqError, OSError):
    """Writing an output, error or recovery file failed (disk full, read-only, permission);
    the message names the path. What was written before stays valid and resumable."""


# ---------------------------------------------------------------------------- secrets
SECRET_ENV_RE = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.I)
"""Environment variables whose values are secrets, by name."""
SECRET_VALUE_RE = re.compile(
    r"(?i:\b(bearer)\s+)[A-Za-z0-9._~+/=\-]{8,}"  # an Authorization header's value
    r"|(?i:\b(api[_-]?key|x-api-key|authorization)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{8,}"  # key=..., "api_key": "..."
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}|\bhf_[A-Za-z0-9]{8,}|\bgh[pousr]_[A-Za-z0-9]{8,}"
    r"|\bxox[abposr]-[A-Za-z0-9\-]{8,}|\bAKIA[0-9A-Z]{16}\b|\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"
)
"""Things that look like keys: bearer tokens, ``api_key=...``, OpenAI / Hugging Face /
GitHub / Slack / AWS key patterns, JWTs."""
_SECRET_ENVS: set[str] = {"OPENAI_API_KEY"}


def register_secret_env(name: str | None) -> None:
    """Treat the value of environment variable ``name`` as a secret (a config's
    ``api_key_env``), whatever its name looks like."""
    if name:
        _SECRET_ENVS.add(name)


def _keep_prefix(m: re.Match) -> str:
    """``Bearer <redacted>``, ``api_key=<redacted>``: the label stays so the message still reads."""
    head = m.group(1) or m.group(2)
    if not head:
        return "<redacted>"
    text = m.group(0)
    i = len(head) + text.lower().index(head.lower())
    while i < len(text) and text[i] in " \t\"':=":
        i += 1
    return text[:i] + "<redacted>"


def redact(text: str) -> str:
    """Mask secrets in ``text``: the values of secret-looking environment variables
    (``*API_KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*``) and of
    the configured ``api_key_env``, and anything that looks like a key or bearer token.
    Used for every output line, warning, error record, log line and CLI error franq writes."""
    if not isinstance(text, str) or not text:
        return text
    for name, value in os.environ.items():
        if not value or not (name in _SECRET_ENVS or SECRET_ENV_RE.search(name)):
            continue
        if len(value) >= 8:
            text = text.replace(value, f"<{name} redacted>")
        elif value in text:  # a short key, whatever its length: masked where it stands as a word of its own
            text = re.sub(rf"(?<![\w\-.]){re.escape(value)}(?![\w\-])", f"<{name} redacted>", text)
    return SECRET_VALUE_RE.sub(_keep_prefix, text)
