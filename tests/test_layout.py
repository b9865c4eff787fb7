"""The package layout holds (issue 13): applications use only the public API, evaluation
code stays off the scoring path, no import cycles (that claims/ and calibration/ never
import franq is tests/test_import_direction.py).

Read from the source (the AST of every .py file), so a rule breaks here before it breaks
an install."""
from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("franq", "claims", "calibration")
EVAL_ONLY = ("franq.evaluation", "lm_polygraph", "matplotlib", "xgboost")


@dataclass(frozen=True)
class Import:
    """One import statement's target: ``module`` and, for ``from module import a, b``,
    the names."""

    line: int
    module: str
    names: tuple[str, ...] = ()


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


MODULES = {module_name(p): p for pkg in PACKAGES for p in source_files(pkg)}


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run when the module is imported: not function bodies, not
    ``if TYPE_CHECKING:`` blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            if not _is_type_checking(stmt.test):
                yield from _module_level(stmt.body)
            yield from _module_level(stmt.orelse)
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            for block in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                yield from _module_level(block)
        elif isinstance(stmt, (ast.With, ast.For, ast.While)):
            yield from _module_level(stmt.body)
            yield from _module_level(getattr(stmt, "orelse", []))
        elif isinstance(stmt, ast.ClassDef):
            yield from _module_level(stmt.body)


def imports(source: str, module: str, *, is_package: bool = False, module_level: bool = False) -> list[Import]:
    """The imports of one module: all of them, or only those run at import time."""
    tree = ast.parse(source)
    nodes = _module_level(tree.body) if module_level else ast.walk(tree)
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out.extend(Import(node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.append(Import(node.lineno, _absolute(node, module, is_package),
                              tuple(alias.name for alias in node.names)))
    return sorted(out, key=lambda imp: imp.line)


def file_imports(path: Path, *, module_level: bool = False) -> list[Import]:
    return imports(path.read_text(encoding="utf-8"), module_name(path),
                   is_package=path.name == "__init__.py", module_level=module_level)


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def public_api() -> set[str]:
    tree = ast.parse((ROOT / "franq" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    raise AssertionError("franq/__init__.py has no __all__")


# ---------------------------------------------------------------------------- apps
def app_violations(source: str, module: str, *, is_package: bool = False, public: set[str]) -> list[str]:
    """First-party imports of an app other than ``franq`` (names in ``__all__``) and
    ``franq.apps.*``."""
    bad = []
    for imp in imports(source, module, is_package=is_package):
        if not any(_within(imp.module, pkg) for pkg in PACKAGES) or _within(imp.module, "franq.apps"):
            continue
        if imp.module == "franq" and not imp.names:
            continue  # import franq
        if imp.module == "franq" and set(imp.names) <= public:
            continue
        names = f" ({', '.join(sorted(set(imp.names) - public))})" if imp.module == "franq" else ""
        bad.append(f"line {imp.line}: {imp.module}{names}")
    return bad


def test_apps_import_only_the_public_api():
    public = public_api()
    bad = [f"{path.relative_to(ROOT)} {v}" for path in source_files("franq/apps")
           for v in app_violations(path.read_text(encoding="utf-8"), module_name(path),
                                   is_package=path.name == "__init__.py", public=public)]
    assert not bad, "franq/apps/ may import only `franq` (names in franq.__all__) and franq.apps.*:\n" + "\n".join(bad)


def test_app_rule_rejects_internals_and_accepts_the_public_api():
    public = public_api()
    ok = ("import franq\nimport franq as fq\nfrom franq import Franq, score\nimport numpy\n"
          "from franq.apps.abstain import policy\nfrom . import helpers\nfrom .helpers import x\n"
          "def f():\n    from franq import AnswerScore\n")
    assert app_violations(ok, "franq.apps.trust", public=public) == []
    bad = ("from franq.pipeline import Franq\nimport franq.lm\nfrom franq import pipeline\n"
           "from claims.types import Claim\nfrom .. import config\n"
           "def f():\n    from calibration.isotonic import IsotonicCalibrator\n")
    assert app_violations(bad, "franq.apps.trust", public=public) == [
        "line 1: franq.pipeline", "line 2: franq.lm", "line 3: franq (pipeline)", "line 4: claims.types",
        "line 5: franq (config)", "line 7: calibration.isotonic"]


# ---------------------------------------------------------------------------- scoring path
def scoring_path() -> list[Path]:
    return [path for name, path in MODULES.items() if not _within(name, "franq.evaluation")]


def test_scoring_path_does_not_import_evaluation_code_at_module_level():
    bad = [f"{path.relative_to(ROOT)}:{imp.line} imports {imp.module}"
           for path in scoring_path() for imp in file_imports(path, module_level=True)
           if any(_within(imp.module, e) or (imp.module == "franq" and "evaluation" in imp.names)
                  for e in EVAL_ONLY)]
    assert not bad, ("evaluation code (the `eval` extra) must stay off the scoring path; import it "
                     "inside the function that needs it:\n" + "\n".join(bad))


def test_importing_the_scoring_path_loads_no_evaluation_code():
    code = ("import sys, franq\nfrom franq.pipeline import Franq\nimport franq.cli\nimport franq.runners.local\n"
            f"print(sorted({{e for e in {EVAL_ONLY!r} for m in sys.modules if m == e or m.startswith(e + '.')}}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"loaded by the scoring path: {out.stdout.strip()}"


# ---------------------------------------------------------------------------- cycles
def import_graph() -> dict[str, set[str]]:
    """Module -> first-party modules it imports at import time. ``from p import x`` points
    at ``p.x`` when that is a module, else at ``p``."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        targets = set()
        for imp in file_imports(path, module_level=True):
            subs = {f"{imp.module}.{n}" for n in imp.names} & MODULES.keys()
            targets |= subs
            if imp.module in MODULES and (not imp.names or len(subs) < len(imp.names)):
                targets.add(imp.module)
        graph[name] = targets - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path a -> ... -> a) per strongly connected component (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_path_in(graph, comp) for comp in components]


def _path_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """The shortest cycle through the component's first module (breadth-first)."""
    start = min(component)
    parent = {start: start}
    queue = [start]
    for v in queue:
        for w in sorted(graph[v] & component):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if w not in parent:
                parent[w] = v
                queue.append(w)
    raise AssertionError(f"no cycle in component {sorted(component)}")


def test_cycle_finder_reports_the_path():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_at_module_level():
    found = cycles(import_graph())
    assert not found, "import cycles (module-level imports):\n" + "\n".join(" -> ".join(c) for c in found)
