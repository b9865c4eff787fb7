"""``franq serve``: a local web service that loads the pipeline once and scores on request
(FastAPI + uvicorn: ``pip install 'franq[serve]'``).

    franq serve [--host 127.0.0.1] [--port 8000] [--model ...] [--threshold 0.5]

Endpoints (JSON bodies match the Python API; each result is the record ``franq score``
writes, see :func:`franq.result_record`):

    GET  /health       {"status": "ok", "model", "components"}
    POST /score        {"question", "passages", "answer", "claims"?, "id"?, "meta"?, "mode"?, "threshold"?}
    POST /score_many   {"examples": [...], "mode"?, "threshold"?} -> {"results": [...]}
    POST /answer       {"question", "passages", "max_new_tokens"?, "mode"?, "threshold"?}
    POST /render       a result record -> {"html": the highlighted view of it}
    GET  /             a page to paste a question, passages and an answer and see the view

Bad input is a 400 (422 for a body that is not a JSON object) whose ``detail`` names the
field; a body over ``--max-body-bytes`` is a 413; when ``--max-pending`` requests are
already waiting for the model, a 503. Scoring runs one request at a time (one loaded
model) in a worker thread, so ``/health`` answers while a request is scored. Binds to
127.0.0.1 unless told otherwise: there is no authentication.
"""
# no `from __future__ import annotations`: FastAPI reads the handlers' annotations (Request) at runtime
import asyncio
import dataclasses
import json
import socket
import threading

import click

import franq
from franq.apps import render

MAX_BODY_BYTES = 2 * 2**20
MAX_PENDING = 8
MAX_EXAMPLES = 64
REQUEST_KEYS = ("mode", "threshold")


def _require_fastapi():
    import importlib.util

    missing = [m for m in ("fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise click.ClickException(f"franq serve needs FastAPI and uvicorn ({', '.join(missing)} missing): "
                                   f"pip install 'franq[serve]'")


class BodyLimit:
    """ASGI middleware: a request that declares a body over ``limit`` bytes gets a 413 before
    any of it is read (a body without a length is counted as it is read: :func:`create_app`)."""

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            declared = dict(scope.get("headers") or ()).get(b"content-length")
            if declared is not None and declared.isdigit() and int(declared) > self.limit:
                body = json.dumps({"detail": too_large(self.limit)}).encode()
                await send({"type": "http.response.start", "status": 413,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def too_large(limit: int) -> str:
    return f"request body over the limit of {limit} bytes (--max-body-bytes)"


def _with_verdicts(result: franq.AnswerScore, threshold: float | None) -> franq.AnswerScore:
    """``result`` with each claim's verdict for the request's threshold (as ``--threshold``)."""
    if threshold is None:
        return result

    def verdict(c: franq.ClaimScore) -> str | None:
        p = render.claim_p_true(c) if c.status == "scored" else None
        return None if p is None else ("likely_true" if p >= threshold else "likely_false")
    return dataclasses.replace(result, claims=tuple(dataclasses.replace(c, verdict=verdict(c)) for c in result.claims))


def _options(body: dict, where: str = "") -> tuple[str | None, float | None]:
    mode, threshold = body.get("mode"), body.get("threshold")
    if mode is not None and mode not in ("long", "short", "auto"):
        raise franq.InputError(f"{where}'mode' must be 'long', 'short' or 'auto', got {mode!r}")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or not 0 <= threshold <= 1):
        raise franq.InputError(f"{where}'threshold' must be a number in [0, 1], got {threshold!r}")
    return mode, threshold


def create_app(pipeline, *, max_body_bytes: int = MAX_BODY_BYTES, max_pending: int = MAX_PENDING,
               max_examples: int = MAX_EXAMPLES):
    """The ASGI app around a loaded :class:`franq.Franq` (tests pass a tiny one)."""
    from fastapi import FastAPI, Request
    from fastapi.responses import HTMLResponse, JSONResponse
    from starlette.concurrency import run_in_threadpool

    app = FastAPI(title="franq", description="Claim-level P(true) of RAG answers (FRANQ).",
                  version=getattr(franq, "__version__", "?"))
    model_lock = threading.Lock()  # one loaded model: one scoring call at a time
    pending = asyncio.Semaphore(max_pending)

    async def body_of(request: Request) -> dict:
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > max_body_bytes:
                raise _Bad(413, too_large(max_body_bytes))
        try:
            body = json.loads(bytes(data))
        except ValueError as exc:
            raise _Bad(400, f"body: not valid JSON ({exc})") from None
        if not isinstance(body, dict):
            raise _Bad(422, f"body: expected a JSON object, got {type(body).__name__}")
        return body

    async def run(fn, *args):
        if pending.locked():
            raise _Bad(503, f"busy: {max_pending} requests are already waiting (--max-pending); retry later")
        async with pending:
            def locked():
                with model_lock:
                    return fn(*args)
            try:
                return await run_in_threadpool(locked)
            except franq.FranqError as exc:
                raise _Bad(400, str(exc)) from None
            except ValueError as exc:  # e.g. the model generated an empty answer
                raise _Bad(422, str(exc)) from None

    @app.exception_handler(_Bad)
    async def _bad(request, exc):  # noqa: ANN001
        return JSONResponse({"detail": exc.detail}, status_code=exc.status)

    @app.exception_handler(franq.FranqError)
    async def _input(request, exc):  # noqa: ANN001 - validation outside the model lock
        return JSONResponse({"detail": str(exc)}, status_code=400)

    @app.get("/health")
    async def health():
        return {"status": "ok", "model": pipeline.lm.name, "mode": pipeline.config.mode,
                "components": pipeline.components}

    def score_examples(items: list[dict], mode: str | None, threshold: float | None) -> list[dict]:
        examples = [franq.Example.from_dict(it, f"examples[{i}]" if len(items) > 1 else "")
                    for i, it in enumerate(items)]
        results = pipeline.score_many(examples, mode=mode)
        return [franq.result_record(ex.id, _with_verdicts(res, threshold), ex) for ex, res in zip(examples, results)]

    @app.post("/score")
    async def score(request: Request):
        body = await body_of(request)
        mode, threshold = _options(body)
        return (await run(score_examples, [{k: v for k, v in body.items() if k not in REQUEST_KEYS}], mode,
                          threshold))[0]

    @app.post("/score_many")
    async def score_many(request: Request):
        body = await body_of(request)
        unknown = sorted(set(body) - {"examples", *REQUEST_KEYS})
        if unknown:
            raise _Bad(400, f"unknown field(s) {unknown}; expected 'examples', 'mode', 'threshold'")
        examples = body.get("examples")
        if not isinstance(examples, list) or not examples:
            raise _Bad(400, "'examples' must be a non-empty list of {question, passages, answer} objects")
        if len(examples) > max_examples:
            raise _Bad(413, f"'examples' has {len(examples)} items, over the limit of {max_examples} per request")
        mode, threshold = _options(body)
        return {"results": await run(score_examples, examples, mode, threshold)}

    @app.post("/answer")
    async def answer(request: Request):
        body = await body_of(request)
        unknown = sorted(set(body) - {"question", "passages", "max_new_tokens", *REQUEST_KEYS})
        if unknown:
            raise _Bad(400, f"unknown field(s) {unknown}; expected 'question', 'passages', 'max_new_tokens', "
                            f"'mode', 'threshold'")
        for key in ("question", "passages"):
            if key not in body:
                raise _Bad(400, f"missing field '{key}'")
        n = body.get("max_new_tokens")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 2048):
            raise _Bad(400, f"'max_new_tokens' must be an integer in [1, 2048], got {n!r}")
        mode, threshold = _options(body)

        def generate():
            res = pipeline.answer(body["question"], body["passages"], max_new_tokens=n, mode=mode)
            example = franq.Example.from_dict({"question": res.question, "passages": body["passages"],
                                               "answer": res.answer})
            return franq.result_record(None, _with_verdicts(res, threshold), example)
        return await run(generate)

    @app.post("/render")
    async def render_view(request: Request):
        record = await body_of(request)
        if not isinstance(record.get("claims"), list) or not isinstance(record.get("answer"), str):
            raise _Bad(400, "body: expected a result record with 'answer' and 'claims' (what /score returns)")
        result = next(franq.read_results(record, with_input=True, name="body"))  # a wrong field: 400
        return {"html": render.answer_html(result, 0)}

    @app.get("/", response_class=HTMLResponse)
    async def page():
        return render.document_html("franq", PAGE_BODY.replace("{legend}", render.legend_html()))

    return BodyLimit(app, max_body_bytes)


class _Bad(Exception):
    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status = status
        self.detail = detail


PAGE_BODY = """
<header><h1>franq</h1><div class="muted">Paste a question, the retrieved passages and an answer: each claim
is coloured by P(true); click a claim for its components and the closest passage window.</div>{legend}</header>
<form id="score-form">
<label for="question">Question</label><input id="question" type="text" required>
<label for="passages">Passages (one per paragraph; separate passages with a blank line)</label>
<textarea id="passages" rows="8" required></textarea>
<label for="answer">Answer</label><textarea id="answer" rows="5" required></textarea>
<p><button id="submit" type="submit">Score</button> <span id="status" class="muted"></span></p>
</form>
<div id="answers"></div>
<script>
document.getElementById("score-form").addEventListener("submit", async function (e) {
  e.preventDefault();
  var status = document.getElementById("status"), out = document.getElementById("answers");
  status.textContent = "scoring…"; status.className = "muted";
  var passages = document.getElementById("passages").value.split(/\\n\\s*\\n/).map(function (p) { return p.trim(); })
    .filter(function (p) { return p; });
  var body = {question: document.getElementById("question").value, passages: passages,
              answer: document.getElementById("answer").value};
  try {
    var r = await fetch("/score", {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body)});
    var record = await r.json();
    if (!r.ok) { throw new Error(record.detail || r.statusText); }
    var v = await fetch("/render", {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(record)});
    var view = await v.json();
    if (!v.ok) { throw new Error(view.detail || v.statusText); }
    out.innerHTML = view.html;
    status.textContent = "done"; window.franqView.refresh();
  } catch (err) { status.textContent = String(err.message || err); status.className = "error"; }
});
</script>
"""


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind (there is no authentication: keep it on loopback unless you know why).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0: any free one).")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False), help="TOML or JSON config file.")
@click.option("--model", help="Causal LM: a local directory or a locally cached name (default: the embedded SmolLM2).")
@click.option("--gguf-file", help="A GGUF file inside --model, or a path to one.")
@click.option("--device", help="cpu, cuda, cuda:1, mps.")
@click.option("--faithfulness", help="Faithfulness backend (default: combined).")
@click.option("--calibrator", help="'default', 'none', or a file from `franq calibrate`.")
@click.option("--mode", type=click.Choice(["long", "short", "auto"]), default=None, help="Default preset.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Default verdict threshold (a request's 'threshold' overrides it).")
@click.option("--max-body-bytes", type=click.IntRange(min=1024), default=MAX_BODY_BYTES, show_default=True,
              help="Largest request body.")
@click.option("--max-pending", type=click.IntRange(min=1), default=MAX_PENDING, show_default=True,
              help="Scoring requests allowed to wait for the model; more get a 503.")
def serve(host, port, config_path, model, gguf_file, device, faithfulness, calibrator, mode, threshold,
          max_body_bytes, max_pending):
    """Serve franq over HTTP: the model is loaded once; POST /score, /score_many, /answer; GET /health;
    GET / is a page to paste an answer and see its claims coloured by P(true)."""
    _require_fastapi()
    import uvicorn

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
             "calibration.threshold": threshold}
    try:
        cfg = franq.FranqConfig.from_file(config_path) if config_path else franq.FranqConfig()
        pipeline = franq.Franq.from_config(cfg.with_overrides({k: v for k, v in flags.items() if v is not None}))
    except franq.FranqError as exc:
        sock.close()
        raise click.ClickException(str(exc)) from None
    app = create_app(pipeline, max_body_bytes=max_body_bytes, max_pending=max_pending)
    port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    click.echo(f"franq serve: {pipeline.lm.name} on http://{shown}:{port}/ (Ctrl-C to stop)", err=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
