"""Config-time checks of a served model (``[model] server``), before anything connects:
the keys' values, a tokenizer to map tokens to characters, and no component that reads
the model's internals."""
from __future__ import annotations

import re
from dataclasses import dataclass

from franq.errors import InputError, register_secret_env

ENGINE_CHOICES = ("auto", "vllm", "sglang", "tgi", "llama-cpp-python")


@dataclass(frozen=True)
class ServedKeys:
    """The ``[model]`` keys of a served model (:class:`franq.config.ModelConfig` has them)."""

    server: str | None = None
    """The server's URL (``http://host:port``, ``http://[::1]:port``; redirects are not followed): passes, samples and generations run there; ``None`` = in-process."""
    engine: str = "auto"
    """Its protocol: ``vllm``, ``sglang``, ``tgi``, ``llama-cpp-python``, or ``auto`` (detected at start-up)."""
    served_model: str | None = None
    """The model name requests carry (vLLM's ``--served-model-name``); ``None`` = the server's only one."""
    tokenizer: str | None = None
    """The served model's tokenizer, local: a directory, a GGUF file, a cached name or ``embedded``;
    ``None`` = ``path``'s. A served model needs one: it maps the answer's tokens to characters."""
    api_key_env: str | None = None
    """The environment variable holding the server's API key (the key itself is never stored)."""
    in_flight: int = 4
    """Requests open at once to the server (bounded by the ``in_flight`` limit)."""
    timeout: float = 120.0
    """Seconds per request, in all: connecting, every retry and its wait, and reading the whole reply."""
    max_retries: int = 4
    """Retries, with exponential backoff, of a request that got 429, 5xx or no connection (at most the
    ``retries`` limit)."""


def check_model_keys(m, limits=None) -> None:
    """The [model] keys of a served model (called for every config; quiet without ``server``);
    ``limits``: the config's (``in_flight``, ``retries``)."""
    from franq.limits import check
    from franq.lm.served.client import check_timeout, server_url

    if m.engine not in ENGINE_CHOICES:
        raise InputError(f"config 'model.engine': expected one of {list(ENGINE_CHOICES)}, got {m.engine!r}")
    for key in ("in_flight", "max_retries"):
        value = getattr(m, key)
        if isinstance(value, bool) or not isinstance(value, int) or value < (1 if key == "in_flight" else 0):
            raise InputError(f"config 'model.{key}': expected a whole number >= {1 if key == 'in_flight' else 0}, "
                             f"got {value!r}")
    check("in_flight", m.in_flight, where="config 'model.in_flight'", limits=limits)
    check("retries", m.max_retries, where="config", subject="'model.max_retries'", limits=limits)
    check_timeout(m.timeout, "timeout")
    if m.api_key_env is not None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", m.api_key_env):
            raise InputError(f"config 'model.api_key_env': expected the name of an environment variable, "
                             f"got {m.api_key_env!r}")
        register_secret_env(m.api_key_env)
    if m.server is None:
        return
    server_url(m.server)
    if not (m.tokenizer or m.path):
        raise InputError("config 'model.tokenizer': a served model needs its tokenizer here, to map the answer's "
                         "tokens to characters exactly (a directory, a GGUF file, a cached name, or 'embedded'); "
                         "the engines' /tokenize routes return no character offsets")


def check_served(config) -> None:
    """Refuse, with the reason, the components that cannot run on a served model."""
    from franq import registry
    from franq.evidence import INTERNALS
    from franq.presets import presets_for, scorer_roles

    if config.model.server is None:
        return
    why = ("reads the model's internals (attention, hidden states), which a served model does not expose; "
           "use an in-process model for it, or another component")
    faith = registry.lookup("faithfulness", config.faithfulness.name)
    if INTERNALS in getattr(faith, "needs", ()):
        raise InputError(f"config 'faithfulness.name': {config.faithfulness.name!r} {why}")
    for preset in presets_for(config.mode, config):
        for where, name in scorer_roles(config, preset):  # none in the fast presets
            if INTERNALS in getattr(registry.lookup("scorers", name), "needs", ()):
                raise InputError(f"config '{where}': {name!r} {why}")
