"""Imports point one way: the leaf packages ``claims/`` and ``calibration/`` never import
``franq`` (read from the source with ``ast``, so a lazy import inside a function counts too)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LEAVES = ("claims", "calibration")


def franq_imports(source: str) -> list[str]:
    """Every absolute import of ``franq`` or a submodule of it in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue  # relative imports stay inside the package (calibration/franq.py is not franq)
        found += [n for n in names if n == "franq" or n.startswith("franq.")]
    return found


def test_the_scan_finds_module_level_and_lazy_imports():
    src = "import os\nfrom . import franq\nfrom calibration.franq import x\n" \
          "def f():\n    from franq.lm import CausalLM\n    import franq\n"
    assert franq_imports(src) == ["franq.lm", "franq"]


@pytest.mark.parametrize("package", LEAVES)
def test_leaf_package_never_imports_franq(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    offenders = {str(p.relative_to(ROOT)): found for p in files
                 if (found := franq_imports(p.read_text(encoding="utf-8")))}
    assert not offenders, f"{package}/ must not import franq: {offenders}"
