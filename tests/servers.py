"""Test helpers for the web service and the browser tests: a uvicorn server on a free
loopback port in a background thread, a local OpenAI-compatible chat server
(:func:`chat_server`, the one the chat, decomposer, answering and trust tests talk to
through the real ``openai`` client), and headless Chromium (skipped with the reason
when none can be found; ``make test`` installs Debian's chromium and chromium-driver
where it runs as root with apt-get, and sets FRANQ_REQUIRE_BROWSER=1 so that a missing
browser then fails instead of skipping)."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = ("install Debian's chromium and chromium-driver (`apt-get install chromium chromium-driver`; "
                "`make test` does it when run as root where apt-get exists) and selenium (the dev extra)")


@contextlib.contextmanager
def serve_in_thread(app, **config):
    """Run ``app`` on 127.0.0.1 at a free port; yields the base URL. ``config``: more
    ``uvicorn.Config`` settings (``http=`` the bounded protocol of franq.apps.serve_sockets)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:  # startup is quick; the thread dies with an error otherwise
        if not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


class ChatHandler(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions`` of an OpenAI-compatible server: a subclass's
    ``reply(body)`` returns ``(content, logprobs)``; every request body is kept in
    ``server.requests``. Handlers with more to script override ``do_POST`` and answer
    with :meth:`send_json` / :func:`chat_completion`."""

    def log_message(self, *args):  # keep test output clean
        pass

    def read_body(self) -> dict:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def do_POST(self):
        body = self.read_body()
        with self.server.lock:
            self.server.requests.append(body)
        content, logprobs = self.reply(body)
        self.send_json(200, chat_completion(body["model"], content, logprobs))

    def reply(self, body: dict) -> tuple[str, dict | None]:
        raise NotImplementedError

    def send_json(self, status: int, obj: dict) -> None:
        payload = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def chat_completion(model: str, content: str, logprobs: dict | None = None) -> dict:
    """One chat completion response (42 prompt and 7 completion tokens of usage)."""
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": logprobs,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}}


@contextlib.contextmanager
def chat_server(handler: type[BaseHTTPRequestHandler], **attrs):
    """``handler`` served on 127.0.0.1 at a free port in a background thread; yields the
    server, with ``base_url`` (``.../v1``), ``requests``, ``lock`` and ``attrs`` set on it."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    srv.requests, srv.lock = [], threading.Lock()
    for name, value in attrs.items():
        setattr(srv, name, value)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)  # quick shutdown
    thread.start()
    srv.base_url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _missing(reason: str):
    if os.environ.get("FRANQ_REQUIRE_BROWSER"):
        pytest.fail(f"FRANQ_REQUIRE_BROWSER is set but {reason}")
    pytest.skip(f"no headless browser: {reason}; {INSTALL_HINT}")


def chrome_driver():
    """A headless Chromium WebDriver, or skip (fail under FRANQ_REQUIRE_BROWSER) saying why."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed")
    binary = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    driver = shutil.which("chromedriver") or next(
        (p for p in ("/usr/lib/chromium/chromedriver", "/usr/bin/chromedriver") if os.path.exists(p)), None)
    if binary is None or driver is None:
        _missing(f"{'Chromium' if binary is None else 'chromedriver'} was not found")
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--disable-extensions"):
        options.add_argument(arg)
    options.binary_location = binary
    try:
        return webdriver.Chrome(options=options, service=Service(driver))
    except Exception as exc:  # noqa: BLE001 - a browser that cannot start is a missing browser
        _missing(f"Chromium at {binary} did not start ({type(exc).__name__}: {str(exc).splitlines()[0]})")
