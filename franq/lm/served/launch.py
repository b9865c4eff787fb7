"""Start llama-cpp-python's server on a GGUF file, on a free loopback port (what the
real-server test and ``benchmarks/bench_served.py`` use; handy to try the served backend
on one machine). The interpreter must have ``llama_cpp`` (``pip install
'llama-cpp-python[server]'``); it need not be franq's own. :func:`f32_gguf` writes an F32
copy of a GGUF, so the server computes in float32 as franq's local pass does: the control
that tells a wrong token offset from quantisation.
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


def f32_gguf(src: str | Path, dst: str | Path) -> Path:
    """``src`` with every tensor de-quantised to F32 and its metadata kept (gguf-py, which
    transformers' GGUF loading already needs)."""
    import gguf
    import numpy as np

    r = gguf.GGUFReader(str(src))
    w = gguf.GGUFWriter(str(dst), r.fields["general.architecture"].contents())
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        kind = f.types[0]
        if name == "general.file_type":
            w.add_uint32(name, 0)  # all F32
        elif kind == gguf.GGUFValueType.ARRAY:
            w.add_array(name, f.contents())
        elif kind == gguf.GGUFValueType.STRING:
            w.add_string(name, f.contents())
        else:
            w.add_key_value(name, f.contents(), kind)
    for t in r.tensors:
        w.add_tensor(t.name, gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return Path(dst)


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
