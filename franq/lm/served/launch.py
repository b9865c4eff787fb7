"""Start llama-cpp-python's server on a GGUF file, on a free loopback port (what the
real-server test and ``scripts/bench_served.py`` use; handy to try the served backend
on one machine). The interpreter must have ``llama_cpp`` (``pip install
'llama-cpp-python[server]'``); it need not be franq's own.
"""
from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import httpx

from franq.errors import FranqError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """``with LlamaServer(python, gguf) as url: ...``: the server's URL while it runs."""

    def __init__(self, python: str, gguf: str | Path, *, threads: int = 1, n_ctx: int = 2048,
                 polls: int = 1200, log: str | Path | None = None):
        self.python, self.gguf, self.threads, self.n_ctx, self.polls = python, str(gguf), threads, n_ctx, polls
        self.log = log
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> str:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        env = {**os.environ, "OMP_NUM_THREADS": str(self.threads)}
        self.proc = subprocess.Popen(
            [self.python, "-m", "llama_cpp.server", "--model", self.gguf, "--host", "127.0.0.1", "--port", str(port),
             "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
             "--logits_all", "true", "--verbose", "false"], stdout=out, stderr=subprocess.STDOUT, env=env)
        for _ in range(self.polls):  # a bounded number of polls, 0.25 s apart
            if self.proc.poll() is not None:
                raise FranqError(f"llama-cpp-python's server exited with {self.proc.returncode} "
                                 f"(see {self.log or 'its output'})")
            try:
                if httpx.get(self.url + "/v1/models", timeout=2).status_code == 200:
                    return self.url
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        self.__exit__()
        raise FranqError(f"llama-cpp-python's server did not answer on {self.url} after {self.polls} polls")

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
