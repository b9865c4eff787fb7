"""Every ```python block of docs/integrations.md runs as written (issue 46.1's target), against
the real framework packages; a block whose framework is not installed is skipped."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
NEEDS = {"opentelemetry": "opentelemetry.sdk", "langchain_core": "langchain_core", "deepeval": "deepeval",
         "haystack": "haystack", "franq.apps.integrations.ragas": "ragas",
         "franq.apps.integrations.llamaindex": "llama_index.core"}
OFFLINE = {"RAGAS_DO_NOT_TRACK": "true", "DEEPEVAL_TELEMETRY_OPT_OUT": "1", "HAYSTACK_TELEMETRY_ENABLED": "False"}


def test_the_doc_has_one_example_per_adapter():
    assert len(BLOCKS) == 8  # LangChain has two: the guard and the callback handler
    for module in ("otel", "openevals", "langchain", "ragas", "deepeval", "llamaindex", "haystack"):
        assert any(f"franq.apps.integrations.{module} import" in b for b in BLOCKS), module
    assert any("callback_handler" in b for b in BLOCKS)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_example_runs(index, capsys, monkeypatch, tmp_path):
    block = BLOCKS[index]
    for name, value in OFFLINE.items():  # the frameworks' usage reports off before they are imported
        monkeypatch.setenv(name, os.environ.get(name, value))
    monkeypatch.chdir(tmp_path)  # a framework's folder (DeepEval's ./.deepeval) lands there, not in the repo
    for name, module in NEEDS.items():
        if re.search(rf"^from {re.escape(name)}\b|^import {re.escape(name)}\b", block, re.MULTILINE):
            pytest.importorskip(module)
    code = compile(block, f"{DOC.name} block {index}", "exec")
    exec(code, {"__name__": "__docs__"})  # noqa: S102 - the doc's own example, as written
    assert capsys.readouterr().out.strip()  # each example prints what it shows
