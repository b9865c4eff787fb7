"""What ``franq serve`` says about itself: the OpenAPI schema of every route (issue 46.6) and
the ``/health`` view, without a file path.

The handlers read raw bodies (the guard checks depth, numbers and repeated keys before
anything parses them), so FastAPI sees no body models; :func:`install_openapi` writes the
request and response schemas of each route into ``/openapi.json`` from the pydantic models
below, which document and never validate. The records are open (``additionalProperties``):
a result carries more fields than listed (:func:`franq.result_record`)."""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

import franq

PATHISH = re.compile(r"(?:(?<!\w)[A-Za-z]:)?(?:~|\.{1,2})?[/\\][^\s,;()\"']*")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Passage(BaseModel):
    text: str
    title: str | None = None


PassageIn = str | Passage
Mode = Literal[franq.FranqConfig.MODES] | None
Threshold = float | None


class ScoreRequest(BaseModel):
    """One answer to score (``POST /score``; an item of ``/score_many``). RAGAS names
    (``user_input``, ``response``, ``retrieved_contexts``, ``contexts``) and, where franq's own
    are missing, ``query`` / ``input``, ``output`` / ``actual_output``, ``documents`` /
    ``retrieval_context`` / ``context`` are read as these fields; other fields are kept in
    ``meta``."""

    question: str
    passages: list[PassageIn]
    answer: str
    claims: list[str] | None = Field(None, description="the claims, instead of splitting the answer")
    id: str | int | None = None
    meta: dict | None = Field(None, description="your own fields, returned as given")
    mode: Mode = None
    threshold: Threshold = Field(None, ge=0, le=1, description="verdict threshold on P(true)")


class ScoreManyRequest(BaseModel):
    examples: list[ScoreRequest] = Field(..., min_length=1)
    mode: Mode = None
    threshold: Threshold = Field(None, ge=0, le=1)


class AnswerRequest(BaseModel):
    """A question to answer with the model, then score."""

    question: str
    passages: list[PassageIn]
    max_new_tokens: int | None = Field(None, ge=1)
    mode: Mode = None
    threshold: Threshold = Field(None, ge=0, le=1)


class ClaimText(_Open):
    text: str
    char_spans: list[list[int]]


class ClaimResult(_Open):
    """One claim's scores (every probability in [0, 1] or null)."""

    claim: ClaimText
    status: str
    p_true_calibrated: float | None = None
    p_true_raw: float | None = None
    p_faithful: float | None = None
    verdict: str | None = None


class ResultRecord(_Open):
    """A result: what ``franq score`` writes per answer (``franq.result_record``);
    ``POST /render`` takes one back."""

    schema_: int = Field(..., alias="schema")
    id: str | int | None = None
    question: str
    answer: str
    mode: str
    claims: list[ClaimResult]
    warnings: list[str] = Field(default_factory=list, description="e.g. text that is not English")


class ManyResults(BaseModel):
    results: list[ResultRecord]


class Html(BaseModel):
    html: str


class Health(BaseModel):
    status: Literal["ok", "stopping"]
    model: str = Field(..., description="the model's name (a local path by its last part)")
    mode: str
    components: dict[str, dict[str, str | dict[str, str]]] = Field(
        ..., description="per preset, each stage's component by name; a calibrator by file name and sha256")
    in_progress: dict[str, int]


class Error(BaseModel):
    detail: str = Field(..., description="one line naming the field, limit or reason")


MODELS = (ScoreRequest, ScoreManyRequest, AnswerRequest, ResultRecord, ManyResults, Html, Health, Error)
ROUTES = {  # (path, method): (request body, 200 reply)
    ("/score", "post"): ("ScoreRequest", "ResultRecord"),
    ("/score_many", "post"): ("ScoreManyRequest", "ManyResults"),
    ("/answer", "post"): ("AnswerRequest", "ResultRecord"),
    ("/render", "post"): ("ResultRecord", "Html"),
    ("/health", "get"): (None, "Health"),
}
ERRORS = {"400": "a field is wrong (named)", "401": "missing or wrong bearer token (--token)",
          "408": "the body did not arrive in time", "413": "over one of franq's limits (named)",
          "415": "not application/json", "422": "the body is not a JSON object",
          "502": "the model's server (a served model, a chat model) is unreachable or fails every request",
          "503": "busy or stopping",
          "504": "over --request-timeout, or a chat model's server did not answer within its timeout"}


def error_status(exc) -> int:
    """The status of a franq error (:data:`ERRORS`): over a limit 413; a model's server that fails
    every request (``stops_run``: ``ServerUnavailable``) 502, or did not answer in time
    (``upstream_timeout``: :class:`franq.errors.UpstreamTimeout`) 504; else a field is wrong, 400."""
    from franq.limits import LimitError

    if isinstance(exc, LimitError):
        return 413
    return 502 if getattr(exc, "stops_run", False) else 504 if getattr(exc, "upstream_timeout", False) else 400


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def install_openapi(app) -> None:
    """``app.openapi()`` returns the routes with their request and response schemas."""
    from fastapi.openapi.utils import get_openapi

    def openapi() -> dict:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        found = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in MODELS:
            js = model.model_json_schema(ref_template="#/components/schemas/{model}", by_alias=True)
            found.update(js.pop("$defs", {}))
            found[model.__name__] = js
        schema["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        for (path, method), (body, result) in ROUTES.items():
            op = schema["paths"].get(path, {}).get(method)
            if op is None:
                continue
            if body:
                op["requestBody"] = {"required": True, "content": {"application/json": {"schema": _ref(body)}}}
            op["responses"] = {"200": {"description": "OK", "content": {"application/json": {"schema": _ref(result)}}},
                               **{code: {"description": why, "content": {"application/json": {"schema": _ref("Error")}}}
                                  for code, why in ERRORS.items() if body or code in ("401", "503")}}
            op["security"] = [{"bearer": []}, {}]
        app.openapi_schema = schema
        return schema
    app.openapi = openapi


# ---------------------------------------------------------------------------- /health
def shown_name(name) -> str:
    """A model or component as /health shows it: every file path in it by its last part (the
    service does not disclose its file system), a hub name or a label as is."""
    text = str(name)
    if os.path.isabs(text) or os.path.exists(text):
        return Path(text).name
    return PATHISH.sub(lambda m: Path(m.group(0)).name if "/" in m.group(0) or "\\" in m.group(0)
                       else m.group(0), text)


def file_id(path) -> dict[str, str] | str:
    """A calibrator file as ``{"name", "sha256"}`` (the first 16 hex digits), never its path."""
    text = str(path)
    if text in ("none", "") or not os.path.isfile(text):
        return shown_name(text)
    digest = hashlib.sha256()
    with open(text, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {"name": Path(text).name, "sha256": digest.hexdigest()[:16]}


def health_components(pipeline) -> dict:
    """``pipeline.components`` as /health shows them: names, a calibrator by name and sha256."""
    return {mode: {k: file_id(v) if k == "calibrator" else shown_name(v) for k, v in c.items()}
            for mode, c in pipeline.components.items()}
