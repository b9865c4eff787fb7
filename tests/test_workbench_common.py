"""The workbench's two halves share one public module: franq.fit imports from
franq.evaluation only through franq.evaluation.common, never a private name, and
franq.evaluation.common imports nothing of franq.fit (so the evaluation modules that measure
what fit builds import fit without a cycle)."""
from __future__ import annotations

import ast
from pathlib import Path

import franq.evaluation.common as common

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


def test_fit_imports_evaluation_only_through_its_common_module():
    wrong = [f"{p.relative_to(ROOT)}: {module} {names}" for p in (ROOT / "franq" / "fit").rglob("*.py")
             for module, names in _imports(p) if module.startswith("franq.evaluation")
             and (module != "franq.evaluation.common" or any(n.startswith("_") for n in names))]
    assert not wrong


def test_the_common_module_is_public_and_imports_no_fit_module():
    assert all(not n.startswith("_") for n in common.__all__)
    assert all(hasattr(common, n) for n in common.__all__)
    assert not [m for m, _ in _imports(Path(common.__file__)) if m.startswith("franq.fit")]
