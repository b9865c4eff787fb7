"""``franq serve``: a local web service that loads the pipeline once and scores on request
(FastAPI + uvicorn: ``pip install 'franq[serve]'``).

    franq serve [--host 127.0.0.1] [--port 8000] [--model ...] [--threshold 0.5]

Endpoints (JSON bodies match the Python API; each result is the record ``franq score``
writes, see :func:`franq.result_record`):

    GET  /health       {"status", "model", "mode", "components", "in_progress"} (names and sha256, never paths)
    POST /score        {"question", "passages", "answer", "claims"?, "id"?, "meta"?, "mode"?, "threshold"?}
    POST /score_many   {"examples": [...], "mode"?, "threshold"?} -> {"results": [...]}
    POST /answer       {"question", "passages", "max_new_tokens"?, "mode"?, "threshold"?}
    POST /render       a result record -> {"html": the highlighted view of it}
    GET  /             a page to paste a question, passages and an answer and see the view
    GET  /docs, /openapi.json   only with --docs: every route's request and response schema
                                (franq.apps.serve_schema), a page of this service, nothing from a CDN

Bad input is a 400 (422 for a body that is not a JSON object) whose ``detail`` names the
field, never a 500; a request over one of franq's limits (:mod:`franq.limits`: the body's
bytes, JSON depth, examples per request, passages, characters, claims, spans; the same
table as ``franq score``; ``--limit NAME=N``) a 413 naming it. Only the service's own
pages and non-browser clients get in (:mod:`franq.apps.serve_guard`): a POST must be
``application/json`` (415), the Host header must name this service (400; ``--allow-host``)
and an Origin must be its own (403; ``--allow-origin``). A body must arrive within
``--read-timeout`` (408). Parsing, scoring and rendering run in worker threads, never on
the event loop, so ``/health`` answers while they work; one request at a time holds the
model; more than ``--max-pending`` at once get a 503; each request has
``--request-timeout`` seconds (504 after, the model released at its next forward pass);
on SIGTERM the request in progress is stopped the same way and the process exits within
``--shutdown-timeout``. Connections are bounded (:mod:`franq.apps.serve_sockets`): a
request head must arrive within ``--header-timeout``, at most ``--max-connections`` are
open, one rate-limited log line per refused connection. ``--token`` (or
``FRANQ_SERVE_TOKEN``): every route but the page needs ``Authorization: Bearer <token>``;
binding beyond loopback is refused without one. Results whose text does not look English
carry a line in ``warnings`` (:mod:`franq.language`, as every result does; ``--multilingual``
sets ``[model] multilingual`` and turns it off).
"""
# no `from __future__ import annotations`: FastAPI reads the handlers' annotations (Request) at runtime
import ipaddress
import logging
import os
import socket

import click

import franq
from franq import limits as table
from franq.apps import render, serve_sockets
from franq.apps.serve_checks import check_example, render_line, view_html
from franq.apps.serve_guard import Guard, Refused, Work, hook_model, load_json, log
from franq.apps.serve_page import PAGE_BODY, docs_body
from franq.apps.serve_schema import error_status, health_components, install_openapi, shown_name
from franq.io import UnknownFields, aliased, parse_example, record_json

MAX_PENDING = 8
REQUEST_TIMEOUT = 300.0
READ_TIMEOUT = 30.0
SHUTDOWN_TIMEOUT = 10.0
REQUEST_KEYS = ("mode", "threshold")


def _require_fastapi():
    import importlib.util

    missing = [m for m in ("fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise click.ClickException(f"franq serve needs FastAPI and uvicorn ({', '.join(missing)} missing): "
                                   f"pip install 'franq[serve]'")


def _with_verdicts(result: franq.AnswerScore, threshold: float | None, pipeline) -> franq.AnswerScore:
    """``result`` with each claim's verdict and reason for the request's threshold (as ``--threshold``;
    the pipeline's ``calibration.uncertain_margin``)."""
    if threshold is None:
        return result
    return franq.with_verdicts(result, threshold, margin=pipeline.config.calibration.uncertain_margin)


def _options(body: dict, where: str = "") -> tuple[str | None, float | None]:
    mode, threshold = body.get("mode"), body.get("threshold")
    if mode is not None and mode not in franq.FranqConfig.MODES:
        raise franq.InputError(f"{where}'mode' must be one of {', '.join(map(repr, franq.FranqConfig.MODES))}, "
                               f"got {mode!r}")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or not 0 <= threshold <= 1):
        raise franq.InputError(f"{where}'threshold' must be a number in [0, 1], got {threshold!r}")
    return mode, threshold


def _checked(record: dict) -> dict:
    """``record`` as the service returns it: strict JSON (a NaN or an infinity is a 500
    naming the field, never a bare token)."""
    try:
        record_json(record)
    except franq.FranqError as exc:
        raise Refused(500, str(exc)) from None
    return record


def _body(data: bytes, limits: dict) -> dict:
    body = load_json(data, max_depth=limits["json_depth"])
    if not isinstance(body, dict):
        raise Refused(422, f"body: expected a JSON object, got {type(body).__name__}")
    return body


def create_app(pipeline, *, limits=None, max_body_bytes: int | None = None, max_pending: int = MAX_PENDING,
               max_examples: int | None = None, request_timeout: float = REQUEST_TIMEOUT,
               read_timeout: float = READ_TIMEOUT, allow_hosts=(), allow_origins=(), docs: bool = False,
               token: str | None = None):
    """The ASGI app around a loaded :class:`franq.Franq` (tests pass a tiny one). ``limits``:
    overrides of :mod:`franq.limits` (``max_body_bytes`` and ``max_examples`` set
    ``body_bytes`` and ``examples_per_request``). Returns the app; its ``work`` attribute
    (:class:`~franq.apps.serve_guard.Work`) stops the requests in progress on shutdown.
    ``token``: the bearer token every route but the page needs. Whether non-English text is
    flagged is the pipeline's ``[model] multilingual``."""
    from fastapi import FastAPI, Request
    from fastapi.responses import HTMLResponse, JSONResponse

    limits = table.resolve({**(limits or {}),
                            **({"body_bytes": max_body_bytes} if max_body_bytes is not None else {}),
                            **({"examples_per_request": max_examples} if max_examples is not None else {})})
    app = FastAPI(title="franq", description="Claim-level P(true) of RAG answers (FRANQ).",
                  version=getattr(franq, "__version__", "?"), docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json" if docs else None)
    if docs:
        install_openapi(app)
    work = Work(timeout=request_timeout, slots=max_pending)
    hook_model(getattr(pipeline.lm, "model", None))  # the budget is checked at every forward pass

    @app.exception_handler(Refused)
    async def _refused(request, exc):  # noqa: ANN001
        return JSONResponse({"detail": exc.detail}, status_code=exc.status)

    @app.exception_handler(franq.FranqError)
    async def _input(request, exc):  # noqa: ANN001 - a bad field: 400; over a limit: 413; a model's server: 502, 504
        return JSONResponse({"detail": str(exc)}, status_code=error_status(exc))

    async def on_model(fn, data: bytes):
        """``fn(body)`` in a worker thread holding the model; the body parsed and checked there."""
        def job():
            body = _body(data, limits)
            ready = fn(body)  # validation (no model): returns the scoring call
            return work.with_model(ready)()
        try:
            return await work.run("model", job)
        except (Refused, franq.FranqError):
            raise
        except ValueError as exc:  # e.g. the model generated an empty answer
            raise Refused(422, str(exc)) from None

    components = health_components(pipeline)  # once: a calibrator's sha256 reads its file
    lm_name = getattr(pipeline.lm, "name", "none")  # none: the fast and chat modes load no causal LM

    @app.get("/health")
    async def health():
        return {"status": "stopping" if work.stopping.is_set() else "ok", "model": shown_name(lm_name),
                "mode": pipeline.config.mode, "components": components, "in_progress": dict(work.busy)}

    def scoring(items: list, mode: str | None, threshold: float | None):
        where = (lambda i: f"examples[{i}]") if len(items) > 1 else (lambda i: "")
        items = [aliased(it, where(i)) for i, it in enumerate(items)]  # RAGAS names read as franq's
        for i, item in enumerate(items):
            check_example(item, limits, where(i))
        unknown, strict = UnknownFields(), pipeline.config.batch.strict  # one notice per request
        examples = [parse_example(it, where(i), limits=limits, strict=strict, unknown=unknown)
                    for i, it in enumerate(items)]  # the service's limits: documents' texts too

        def score():
            results = pipeline.score_many(examples, mode=mode)
            return [_checked(franq.result_record(ex.id, _with_verdicts(res, threshold, pipeline), ex))
                    for ex, res in zip(examples, results)]
        return score

    def score_one(body: dict):
        mode, threshold = _options(body)
        run = scoring([{k: v for k, v in body.items() if k not in REQUEST_KEYS}], mode, threshold)
        return lambda: run()[0]

    def score_batch(body: dict):
        unknown = sorted(set(body) - {"examples", *REQUEST_KEYS})
        if unknown:
            raise Refused(400, f"unknown field(s) {unknown}; expected 'examples', 'mode', 'threshold'")
        examples = body.get("examples")
        if not isinstance(examples, list) or not examples:
            raise Refused(400, "'examples' must be a non-empty list of {question, passages, answer} objects")
        table.check("examples_per_request", len(examples), where="'examples'", limits=limits)
        mode, threshold = _options(body)
        run = scoring(examples, mode, threshold)
        return lambda: {"results": run()}

    def generate(body: dict):
        unknown = sorted(set(body) - {"question", "passages", "max_new_tokens", *REQUEST_KEYS})
        if unknown:
            raise Refused(400, f"unknown field(s) {unknown}; expected 'question', 'passages', 'max_new_tokens', "
                               f"'mode', 'threshold'")
        for key in ("question", "passages"):
            if key not in body:
                raise Refused(400, f"missing field '{key}'")
        n, most = body.get("max_new_tokens"), limits["max_new_tokens"]
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise Refused(400, f"'max_new_tokens' must be an integer in [1, {most}], got {n!r}")
        if n is not None:
            table.check("max_new_tokens", n, where="'max_new_tokens'", limits=limits)
        check_example(body, limits)
        mode, threshold = _options(body)
        passages = franq.Example.from_dict({"question": body["question"], "passages": body["passages"],
                                            "answer": "-"}).passages  # validated before the model

        def answer():
            res = pipeline.answer(body["question"], passages, max_new_tokens=n, mode=mode)
            example = franq.Example.from_dict({"question": res.question, "passages": body["passages"],
                                               "answer": res.answer})
            return _checked(franq.result_record(None, _with_verdicts(res, threshold, pipeline), example))
        return answer

    @app.post("/score")
    async def score(request: Request):
        return await on_model(score_one, await request.body())

    @app.post("/score_many")
    async def score_many(request: Request):
        return await on_model(score_batch, await request.body())

    @app.post("/answer")
    async def answer(request: Request):
        return await on_model(generate, await request.body())

    @app.post("/render")
    async def render_view(request: Request):
        data = await request.body()

        def job():
            return {"html": view_html(render_line(_body(data, limits), limits), limits)}
        return await work.run("render", job)

    @app.get("/", response_class=HTMLResponse)
    async def page():
        return render.document_html("franq", PAGE_BODY.replace("{legend}", render.legend_html()))

    if docs:
        @app.get("/docs", response_class=HTMLResponse)
        async def docs_page():
            return render.document_html("franq API", docs_body(app.openapi()))

    guarded = Guard(app, body_bytes=limits["body_bytes"], read_timeout=read_timeout, allow_hosts=allow_hosts,
                    allow_origins=allow_origins, token=token)
    guarded.work = work
    return guarded


def _limit_overrides(values) -> dict[str, int]:
    out = {}
    for value in values:
        name, sep, number = value.partition("=")
        if not sep or not number.strip().isdigit():
            raise click.BadParameter(f"expected NAME=N (e.g. body_bytes=4194304), got {value!r}", param_hint="--limit")
        out[name.strip()] = int(number)
    return out


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_token(token: str | None, host: str) -> None:
    """A usable token (16+ printable ASCII characters, no spaces); none only on loopback."""
    if token is None or token == "":
        if not is_loopback(host):
            raise click.ClickException(f"--host {host}: binding beyond loopback needs a token (--token TOKEN or "
                                       f"FRANQ_SERVE_TOKEN; e.g. python -c 'import secrets; "
                                       f"print(secrets.token_urlsafe(32))')")
        return
    if len(token) < 16 or not all(33 <= ord(c) < 127 for c in token):
        raise click.ClickException("--token: expected 16 or more printable ASCII characters without spaces "
                                   f"(got {len(token)} characters)")


def _server(config, work: Work):
    """uvicorn's server, told about SIGTERM / Ctrl-C: the requests in progress stop at their
    next checkpoint (:class:`~franq.apps.serve_guard.Work`) while uvicorn stops listening
    and waits at most ``timeout_graceful_shutdown`` for their connections."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):
            log.warning("franq serve: signal %d: stopping (requests in progress are stopped)", sig)
            work.stop()
            super().handle_exit(sig, frame)
    return Server(config)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; beyond loopback only with --token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0: any free one).")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False), help="TOML or JSON config file.")
@click.option("--model", help="Causal LM: a local directory or a locally cached name (default: the embedded SmolLM2).")
@click.option("--gguf-file", help="A GGUF file inside --model, or a path to one.")
@click.option("--device", help="cpu, cuda, cuda:1, mps.")
@click.option("--faithfulness", help=f"Faithfulness backend (default: {franq.FranqConfig().faithfulness.name}).")
@click.option("--calibrator", help="'default', 'none', or a file from `franq fit calibrator`.")
@click.option("--mode", type=click.Choice(franq.FranqConfig.MODES), default=None,
              help="Default preset (a request's 'mode' overrides it; 'fast' and 'chat' load no LM: their requests "
                   "stay without one).")
@click.option("--fast", is_flag=True, help="--mode fast: the verifier alone, calibrated; no causal LM loaded.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Default verdict threshold (a request's 'threshold' overrides it).")
@click.option("--limit", "limit_values", multiple=True, metavar="NAME=N",
              help="Raise or lower one of franq's limits (docs/batch.md), e.g. body_bytes=4194304, passages=2000.")
@click.option("--max-body-bytes", type=click.IntRange(min=1024), default=None,
              help="Largest request body (the limit body_bytes, 2 MiB by default).")
@click.option("--max-pending", type=click.IntRange(min=1), default=MAX_PENDING, show_default=True,
              help="Requests allowed in progress or waiting for the model at once; more get a 503.")
@click.option("--request-timeout", type=click.FloatRange(min=0.1), default=REQUEST_TIMEOUT, show_default=True,
              help="Seconds a request may take, waiting included; then a 504 and the model is released at its "
                   "next forward pass.")
@click.option("--read-timeout", type=click.FloatRange(min=0.1), default=READ_TIMEOUT, show_default=True,
              help="Seconds a client has to send a request body; then a 408 and the connection is closed.")
@click.option("--shutdown-timeout", type=click.FloatRange(min=0.1), default=SHUTDOWN_TIMEOUT, show_default=True,
              help="On SIGTERM, seconds the request in progress has to stop before the process exits anyway.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Another name this service answers to in the Host header (loopback names and the bound "
                   "address always; '*': any, e.g. behind a proxy that checks it).")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="URL",
              help="Another origin whose pages may call this service (e.g. http://intranet.example:3000).")
@click.option("--header-timeout", type=click.FloatRange(min=0.1), default=serve_sockets.HEADER_TIMEOUT,
              show_default=True, help="Seconds a connection has to send a whole request head; then a 408 and closed.")
@click.option("--max-connections", type=click.IntRange(min=1, max=100_000), default=serve_sockets.MAX_CONNECTIONS,
              show_default=True, help="Open connections at most (lowered to fit the open-file limit); over it the "
                                      "oldest one without a request is closed, or the new one refused.")
@click.option("--token", envvar="FRANQ_SERVE_TOKEN", default=None, show_envvar=True,
              help="Bearer token every route but the page needs (Authorization: Bearer TOKEN); 16+ characters. "
                   "Needed to bind beyond loopback.")
@click.option("--multilingual", is_flag=True,
              help="The models read languages other than English: no warning on non-English text.")
@click.option("--docs", is_flag=True, help="Serve /openapi.json and a plain /docs page (off by default).")
def serve(host, port, config_path, model, gguf_file, device, faithfulness, calibrator, mode, fast, threshold,
          limit_values, max_body_bytes, max_pending, request_timeout, read_timeout, shutdown_timeout, allow_hosts,
          allow_origins, header_timeout, max_connections, token, multilingual, docs):
    """Serve franq over HTTP: the model is loaded once; POST /score, /score_many, /answer, /render;
    GET /health; GET / is a page to paste an answer and see its claims coloured by P(true)."""
    _require_fastapi()
    import uvicorn

    check_token(token, host)
    from franq.cli.options import fast_mode  # not at the top: franq.cli imports this module

    mode = fast_mode(fast, mode)
    overrides = _limit_overrides(limit_values)
    try:
        table.resolve(overrides, where="--limit")
    except franq.FranqError as exc:
        raise click.ClickException(str(exc)) from None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:  # bound before the model loads: a busy port fails at once; port 0 is a free port, printed below
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise click.ClickException(f"--host/--port: cannot listen on {host}:{port}: {exc.strerror}") from None
    flags = {"model.path": model, "model.gguf_file": gguf_file, "model.device": device,
             "faithfulness.name": faithfulness, "calibration.calibrator": calibrator, "mode": mode,
             "calibration.threshold": threshold, "model.multilingual": True if multilingual else None}
    try:
        cfg = franq.FranqConfig.from_file(config_path) if config_path else franq.FranqConfig()
        pipeline = franq.Franq.from_config(cfg.with_overrides({k: v for k, v in flags.items() if v is not None}))
        limits = {**(getattr(cfg, "limits", None) or {}), **overrides}  # [limits] of the config, then --limit
        app = create_app(pipeline, limits=limits, max_body_bytes=max_body_bytes, max_pending=max_pending,
                         request_timeout=request_timeout, read_timeout=read_timeout, allow_hosts=allow_hosts,
                         allow_origins=allow_origins, docs=docs, token=token)
    except franq.FranqError as exc:
        sock.close()
        raise click.ClickException(str(exc)) from None
    if not log.handlers:  # one line per event on stderr (client gone, read timeout, signal)
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.propagate = False
    port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    mode = pipeline.config.mode
    uq = pipeline.components.get(mode, {})
    what = (pipeline.lm.name if pipeline.lm is not None else "the verifier alone (fast mode, no causal LM)"
            if mode == "fast" else f"{uq['uq_faith']} / {uq['uq_unfaith']} ({mode} mode, no causal LM)")
    click.echo(f"franq serve: {what} on http://{shown}:{port}/ (Ctrl-C to stop)", err=True)
    bounded = serve_sockets.protocol(header_timeout=header_timeout,
                                     max_connections=serve_sockets.connection_cap(max_connections))
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=shutdown_timeout, http=bounded)
    _server(config, app.work).run(sockets=[sock])
    if not app.work.wait(shutdown_timeout):  # a request stuck between checkpoints: do not wait for it
        log.warning("franq serve: a request did not stop within %g s (--shutdown-timeout); exiting", shutdown_timeout)
        os._exit(1)
