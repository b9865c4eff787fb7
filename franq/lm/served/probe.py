"""The capability probe run when a served model is connected: which engine answers (for
``engine = "auto"``), and one tiny request per feature franq uses, so that what the server
cannot do is said once, at start-up, naming the engine and the parameter it lacks.

    prompt_logprobs  the teacher-forced passes (long form, the observer's answer likelihood)
    samples          n sampled answers with their log-probabilities (short form)
"""
from __future__ import annotations

from dataclasses import dataclass

from franq.errors import InputError
from franq.lm.served.base import BadNumber, SampleParams
from franq.lm.served.client import Request, ServedModelError, ServerClient


@dataclass(frozen=True)
class Capabilities:
    engine: str
    server: str
    prompt_param: str
    prompt_logprobs: str | None = None
    """None when the server returns prompt log-probabilities, else why not."""
    samples: str | None = None
    """None when the server samples with log-probabilities, else why not."""
    n_per_request: bool = True

    def refusal(self) -> str:
        return (f"model.server: the {self.engine} server at {self.server} returns no prompt log-probabilities "
                f"(it lacks {self.prompt_param}: {self.prompt_logprobs}), which the token passes and the observer's answer likelihood need; on "
                f"it the short form runs in-policy (mode = \"short\", uq.short_scoring = \"in_policy\")")

    def describe(self) -> str:
        def say(why):
            return "yes" if why is None else f"no ({why})"
        return (f"{self.engine} at {self.server}: prompt log-probabilities {say(self.prompt_logprobs)}; "
                f"samples with log-probabilities {say(self.samples)}; "
                f"n per request {'yes' if self.n_per_request else 'no (one request per sample)'}")


def detect_engine(client: ServerClient) -> str:
    """The engine behind ``client`` from its informational routes (TGI ``/info``, SGLang
    ``/get_model_info``, the ``owned_by`` of ``/v1/models``: ``vllm``, llama-cpp-python's ``me``)."""
    info, _ = client.try_post(Request("GET", "/info"))
    if isinstance(info, dict) and "model_id" in info and ("max_input_tokens" in info or "router" in info
                                                          or "max_total_tokens" in info):
        return "tgi"
    info, _ = client.try_post(Request("GET", "/get_model_info"))
    if isinstance(info, dict) and "model_path" in info:
        return "sglang"
    models, why = client.try_post(Request("GET", "/v1/models"))
    owner = None
    if isinstance(models, dict) and models.get("data") and isinstance(models["data"][0], dict):
        owner = models["data"][0].get("owned_by")
    if owner == "vllm":
        return "vllm"
    if owner == "me":
        return "llama-cpp-python"
    raise InputError(f"model.engine: 'auto' cannot tell which engine serves {client.base_url} "
                     f"(/v1/models owned_by={owner!r}{'; ' + why if why else ''}); set [model] engine to one of "
                     f"vllm, sglang, tgi, llama-cpp-python")


def probe(client: ServerClient, engine, tokenizer) -> Capabilities:
    """One tiny request per feature; a refusal or an unreadable reply marks the feature off."""
    from franq.lm.served.base import ScoreItem

    prompt, answer = tokenizer.encode("Paris is", add_special_tokens=False), \
        tokenizer.encode(" the capital", add_special_tokens=False)
    engine.setup(client, tokenizer)
    item = ScoreItem(tuple(prompt), tuple(answer), tokenizer.decode(prompt), tokenizer.decode(answer))
    no_prompt = _try(lambda: _check_score(engine.read_score(client.post(engine.score_request(item)), item), answer))
    p = SampleParams(2, 1.0, max_tokens=2, seed=0)
    reqs = engine.sample_requests(prompt, item.prompt_text, p)
    no_samples = _try(lambda: _check_draws(engine.read_samples(client.post_all(reqs))))
    return Capabilities(engine.name, client.base_url, engine.prompt_param, no_prompt, no_samples,
                        engine.n_per_request)


def _try(fn) -> str | None:
    try:
        fn()
    except ServedModelError as exc:
        if getattr(exc, "stops_run", False) or isinstance(exc, BadNumber):  # down, or sending nonsense
            raise
        return str(exc)
    return None


def _check_score(lps, answer) -> None:
    if len(lps) != len(answer):
        raise ServedModelError(f"{len(lps)} log-probabilities for {len(answer)} tokens")


def _check_draws(draws) -> None:
    if len(draws) != 2:
        raise ServedModelError(f"asked for 2 samples, got {len(draws)}")
    if any(d.tokens and not d.logprobs for d in draws) or all(not d.logprobs for d in draws):
        raise ServedModelError("the samples carry no log-probabilities")
