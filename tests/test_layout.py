"""The three rooms (docs/architecture.md) keep their doors (issue 24):

    scoring library   franq/ (all but the rooms below), claims/, calibration/
    workbench         franq/fit/, franq/evaluation/
    applications      franq/apps/
    the command       franq/cli/  (parses options, calls the rooms; imports any of them)

- the library imports nothing from the workbench, the applications or the command;
- the workbench imports the library, never the applications or the command;
- an application imports the public API (``franq.__all__``), the named extension surface
  (:data:`EXTENSIONS`) and ``franq.apps.*``, nothing else first-party;
- the public API is the core list below; no module is over 400 lines; scripts neither edit
  ``sys.path`` nor import ``tests``; evaluation-only packages stay off the scoring path; no
  import cycles; no module imports a private name of another room; every file in
  benchmarks/results/ is cited; the README is at most 200 lines; the configuration reference
  is in sync. (That claims/ and calibration/ never import franq is
  tests/test_import_direction.py.)

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
EVAL_ONLY = ("lm_polygraph", "matplotlib", "xgboost")
"""The `eval` extra's packages: never loaded by scoring or by the command at start-up."""
WORKBENCH = ("franq.fit", "franq.evaluation")
APPS = ("franq.apps",)
COMMAND = ("franq.cli", "franq.__main__")
EXTENSIONS = ("franq.lm", "franq.io", "franq.registry", "franq.evaluation.metrics", "franq.cli.options",
              "franq.limits")
"""What an application may import besides the public API: the language-model layer (models,
prompts, label probabilities, chat clients), input parsing, the component registry, the
project's one metrics module, the shared command-line option groups and the one table of limits."""
PUBLIC_API = {
    "AnswerScore", "CalibratorInfo", "CausalLM", "Claim", "ClaimScore", "ContextOverflowError", "Decision", "Example",
    "Franq", "FranqConfig", "FranqError", "InputError", "KnowledgeTerm", "ModelNotFoundError", "Passage", "WeakestClaim",
    "claim_p_true", "read_results", "result_record", "score", "with_verdicts",
}
MAX_LINES = 400


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
    """First-party imports of an app other than ``franq`` (names in ``__all__``), the
    extension surface and ``franq.apps.*``."""
    bad = []
    for imp in imports(source, module, is_package=is_package):
        if not any(_within(imp.module, pkg) for pkg in PACKAGES) or _within(imp.module, "franq.apps"):
            continue
        if any(_within(imp.module, e) for e in EXTENSIONS):
            continue
        if imp.module == "franq" and not imp.names:
            continue  # import franq
        if imp.module == "franq" and all(n in public or f"franq.{n}" in EXTENSIONS for n in imp.names):
            continue
        names = f" ({', '.join(sorted(set(imp.names) - public))})" if imp.module == "franq" else ""
        bad.append(f"line {imp.line}: {imp.module}{names}")
    return bad


def test_apps_import_only_the_public_api():
    public = public_api()
    bad = [f"{path.relative_to(ROOT)} {v}" for path in source_files("franq/apps")
           for v in app_violations(path.read_text(encoding="utf-8"), module_name(path),
                                   is_package=path.name == "__init__.py", public=public)]
    assert not bad, ("franq/apps/ may import only `franq` (names in franq.__all__), the extension surface "
                     f"{EXTENSIONS} and franq.apps.*:\n" + "\n".join(bad))


def test_app_rule_rejects_internals_and_accepts_the_public_api():
    public = public_api()
    ok = ("import franq\nimport franq as fq\nfrom franq import Franq, score\nimport numpy\n"
          "from franq.apps.abstain import policy\nfrom . import helpers\nfrom .helpers import x\n"
          "from franq.lm.labels import LabelWords\nfrom franq.evaluation.metrics import auroc\n"
          "def f():\n    from franq import AnswerScore\n")
    assert app_violations(ok, "franq.apps.trust", public=public) == []
    bad = ("from franq.pipeline import Franq\nimport franq.fit\nfrom franq import pipeline\n"
           "from claims.types import Claim\nfrom .. import config\n"
           "def f():\n    from calibration.isotonic import IsotonicCalibrator\n    from franq.evaluation.units import Units\n")
    assert app_violations(bad, "franq.apps.trust", public=public) == [
        "line 1: franq.pipeline", "line 2: franq.fit", "line 3: franq (pipeline)", "line 4: claims.types",
        "line 5: franq (config)", "line 7: calibration.isotonic", "line 8: franq.evaluation.units"]


# ---------------------------------------------------------------------------- rooms
def room(module: str) -> str:
    for name, prefixes in (("workbench", WORKBENCH), ("apps", APPS), ("command", COMMAND)):
        if any(_within(module, p) for p in prefixes):
            return name
    return "library"


FORBIDDEN = {"library": WORKBENCH + APPS + COMMAND, "workbench": APPS + COMMAND}


def room_violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """Imports (at any depth, lazy ones too) that cross a room's door the wrong way."""
    forbidden = FORBIDDEN.get(room(module), ())
    bad = []
    for imp in imports(source, module, is_package=is_package):
        targets = [imp.module] + [f"{imp.module}.{n}" for n in imp.names if imp.module == "franq"]
        hit = [t for t in targets if any(_within(t, f) for f in forbidden)]
        if hit:
            bad.append(f"line {imp.line}: {hit[0]}")
    return bad


def test_rooms_import_only_downwards():
    bad = [f"{path.relative_to(ROOT)} ({room(name)}) {v}" for name, path in MODULES.items()
           for v in room_violations(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")]
    assert not bad, ("the library imports neither the workbench, the apps nor the command; the workbench "
                     "imports neither the apps nor the command:\n" + "\n".join(bad))


def test_room_rule_catches_lazy_and_from_imports():
    src = "import franq.apps.report\nfrom franq import fit\ndef f():\n    from franq.cli.options import printable\n"
    assert room_violations(src, "franq.pipeline") == [
        "line 1: franq.apps.report", "line 2: franq.fit", "line 4: franq.cli.options"]
    assert room_violations("from franq.pipeline import Franq\nimport franq.fit.probe\n", "franq.evaluation.units") == []
    assert room_violations("from franq.apps.render import csv_text\n", "franq.fit.calibrator") == [
        "line 1: franq.apps.render"]
    assert room("franq.cli.score") == "command" and room("claims.atomic") == "library"


def _part(module: str) -> str:
    """Where a private name may be shared: within one package of franq (franq.fit,
    franq.evaluation, franq.stages, franq.apps...) or one top-level package (claims, calibration)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "franq" else parts[0]


def private_imports(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """``from X import _name`` where X is in another room, or (within the workbench) in the
    other of fit/ and evaluation/: what rooms share is public (franq.evaluation.common)."""
    bad = []
    for imp in imports(source, module, is_package=is_package):
        for name in imp.names:
            if not name.startswith("_") or name.startswith("__"):
                continue
            if room(imp.module) != room(module) or (room(module) == "workbench"
                                                     and _part(imp.module) != _part(module)):
                bad.append(f"line {imp.line}: {imp.module}.{name}")
    return bad


def test_no_module_imports_a_private_name_of_another_room():
    bad = [f"{path.relative_to(ROOT)}: {v}" for name, path in MODULES.items()
           for v in private_imports(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")]
    assert not bad, "a private name imported across rooms (make it public, e.g. in franq.evaluation.common):\n" + \
        "\n".join(bad)


def test_private_name_rule_catches_the_workbench_sharing_a_private_helper():
    src = "from franq.evaluation.units import _NamedModel\nfrom franq.fit.verifier.data import _x\n"
    assert private_imports(src, "franq.fit.shipped_verifier") == ["line 1: franq.evaluation.units._NamedModel"]
    assert private_imports("from franq.lm.load import _cache\n", "franq.apps.serve") == ["line 1: franq.lm.load._cache"]
    assert private_imports("from franq.lm.load import _cache\n", "franq.pipeline") == []


def test_public_api_is_the_core_list():
    assert public_api() == PUBLIC_API
    import franq

    for name in PUBLIC_API:
        assert getattr(franq, name) is not None, name


def script_files() -> list[Path]:
    """The maintained scripts: dataset builders in scripts/, benchmarks in benchmarks/ (the
    records in experiments/ are not maintained)."""
    return sorted(p for d in ("scripts", "benchmarks") for p in (ROOT / d).glob("*.py"))


def test_no_module_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in [*MODULES.values(), *script_files()]
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by what they do): {long}"


def script_violations(source: str) -> list[str]:
    """A script that edits ``sys.path`` or imports ``tests``."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) \
                and node.value.id == "sys":
            bad.append(f"line {node.lineno}: sys.path")
        elif isinstance(node, ast.Import) and any(_within(a.name, "tests") for a in node.names):
            bad.append(f"line {node.lineno}: imports tests")
        elif isinstance(node, ast.ImportFrom) and node.module and _within(node.module, "tests"):
            bad.append(f"line {node.lineno}: imports tests")
    return sorted(bad, key=lambda b: int(b.split(":")[0].split()[1]))


def test_scripts_neither_edit_sys_path_nor_import_tests():
    bad = [f"{p.relative_to(ROOT)} {v}" for p in script_files()
           for v in script_violations(p.read_text(encoding="utf-8"))]
    assert not bad, ("scripts call the installed library: no sys.path edits, no imports from tests/ "
                     "(move shared helpers into franq.evaluation or franq.fit):\n" + "\n".join(bad))


def test_script_rule_catches_path_edits_and_test_imports():
    src = "import sys\nsys.path.insert(0, 'x')\nfrom tests.tiny import make\nimport tests.servers\nprint(sys.argv)\n"
    assert script_violations(src) == ["line 2: sys.path", "line 3: imports tests", "line 4: imports tests"]


# ---------------------------------------------------------------------------- scoring path
def scoring_path() -> list[Path]:
    """The library and the command: what ``franq score`` imports."""
    return [path for name, path in MODULES.items() if room(name) in ("library", "command")]


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


# ---------------------------------------------------------------------------- the tree in docs/architecture.md
def readme_layout() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = text.index("## The tree, file by file")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_readme_layout_names_only_paths_that_exist():
    block = readme_layout()
    import re

    paths = set(re.findall(r"\b((?:franq|claims|calibration|datasets|scripts)/[\w/]*\w(?:\.py)?/?)", block))
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md's tree names paths that do not exist: {missing}"
    files = {p.name for pkg in (*PACKAGES, "tests", "scripts") for p in (ROOT / pkg).rglob("*.py")}
    unknown = sorted(set(re.findall(r"\b(\w+\.py)\b", block)) - files)
    assert not unknown, f"docs/architecture.md's tree names modules that do not exist: {unknown}"


def test_readme_layout_names_every_part_of_franq():
    block = readme_layout()
    parts = sorted(p.name for p in (ROOT / "franq").iterdir()
                   if (p.suffix == ".py" and p.name != "__main__.py") or (p.is_dir() and (p / "__init__.py").exists()))
    unnamed = [p for p in parts if f"franq/{p}" not in block]
    assert not unnamed, f"docs/architecture.md's tree does not name: {unnamed}"


# ---------------------------------------------------------------------------- results files are cited
def citing_text() -> str:
    """What may cite a results file: README.md, docs/**/*.md, the dataset cards
    (datasets/**/README.md) and the maintained benchmarks (benchmarks/*.py, benchmarks/*.sh)."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "datasets").rglob("README.md")),
             *sorted((ROOT / "benchmarks").glob("*.py")), *sorted((ROOT / "benchmarks").glob("*.sh"))]
    return "\n".join(p.read_text(encoding="utf-8") for p in paths if p.is_file())


def uncited(entries: list[str], roots: str, read) -> list[str]:
    """The entries of benchmarks/results/ (a file, or a folder as one entry) whose name appears
    neither in ``roots`` nor in a cited entry's own text (``read(name)``, "" for a folder or a
    binary file): a results file is cited when a doc, a dataset card or a maintained benchmark
    names it, or when a cited results file does (paper-tables.md names its plots)."""
    cited, text = set(), roots
    while True:
        new = {e for e in entries if e not in cited and e in text}
        if not new:
            return sorted(set(entries) - cited)
        cited |= new
        text = "\n".join(read(e) for e in sorted(new))


def test_every_results_file_is_cited():
    """benchmarks/results/ holds what the docs cite (issue 43): every entry's file name appears
    in README.md, docs/**/*.md, a dataset card (datasets/**/README.md), a maintained benchmark
    (benchmarks/*.py, *.sh) or a results file cited that way. A measurement nothing cites is an
    experiment: it goes to experiments/<date>-<name>/ with its README (experiments/README.md)."""
    results = ROOT / "benchmarks" / "results"

    def read(name: str) -> str:
        path = results / name
        return path.read_text(encoding="utf-8") if path.suffix in (".md", ".json", ".jsonl") else ""

    missing = uncited(sorted(p.name for p in results.iterdir()), citing_text(), read)
    assert not missing, f"results files nothing cites (cite them in docs/BENCHMARKS.md or move them to experiments/): {missing}"


def test_citation_rule_follows_cited_results_files_only():
    texts = {"a.md": "see b.png", "b.png": "", "c.md": "see d.png", "d.png": ""}
    assert uncited(sorted(texts), "docs cite a.md", texts.get) == ["c.md", "d.png"]


# ---------------------------------------------------------------------------- docs that lead with what ships
README_MAX_LINES = 200


def test_readme_is_at_most_200_lines():
    n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines (at most {README_MAX_LINES}): move the detail to docs/"


def test_configuration_reference_is_in_sync_with_the_config_fields_and_component_settings():
    from franq.config_reference import DOC, generated_part, markdown_reference

    assert generated_part(DOC.read_text(encoding="utf-8")) == markdown_reference(), \
        "docs/configuration.md's reference is out of date: run python -m franq.config_reference --write"


def test_configuration_reference_names_every_config_key_and_component_setting():
    import dataclasses

    from franq import registry
    from franq.config import SECTIONS, FranqConfig
    from franq.config_reference import DOC
    from franq.settings import declared, where

    doc = DOC.read_text(encoding="utf-8")
    keys = [f.name for f in dataclasses.fields(FranqConfig) if f.name not in ("components", "limits", *SECTIONS)]
    keys += [f"{name}.{f.name}" for name, cls in SECTIONS.items() for f in dataclasses.fields(cls)]
    keys += [f"{where(kind, name)}.{s.name}" for kind in registry.kinds() if kind != "apps"
             for name in registry.BUILTIN[kind] for s in declared(registry.lookup(kind, name))]
    missing = [k for k in keys if f"| `{k}` |" not in doc]
    assert not missing, f"docs/configuration.md's reference does not name {missing}"
