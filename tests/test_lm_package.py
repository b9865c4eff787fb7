"""The franq/lm/ package: imports point one way (no cycles), the text-only modules need no
torch, and ``from franq.lm import CausalLM`` keeps working."""
from __future__ import annotations

import ast
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "franq" / "lm"


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _module_level_imports(path: Path) -> set[str]:
    """franq.lm modules imported when ``path`` is imported (TYPE_CHECKING blocks and imports
    inside functions do not run at import time)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("franq.lm"):
            names = [a.name for a in node.names]
            subs = [n for n in names if (PACKAGE / f"{n}.py").is_file()] if node.module == "franq.lm" else []
            found |= {f"franq.lm.{n}" for n in subs} or {node.module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("franq.lm.")}
    return found


def test_lm_modules_import_each_other_without_a_cycle():
    graph = {f"franq.lm.{p.stem}": _module_level_imports(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import cycle in franq/lm/: {exc.args[1]}")
    assert order.index("franq.lm.teacher_forcing") < order.index("franq.lm.sampling") < order.index("franq.lm.model")


@pytest.mark.parametrize("first", ["from franq.lm.sampling import Sampler", "from franq.lm import CausalLM"])
def test_sampling_and_the_model_each_import_first_in_a_fresh_interpreter(first):
    """franq/lm.py and franq/sampling.py used to import each other; a cycle shows when the
    module on the cycle is imported first."""
    _run(f"{first}\nfrom franq.lm import CausalLM, AnswerPass, Generation, Prompt\n"
         "from franq.lm.sampling import Sampler\nassert CausalLM.sample and Sampler and Prompt")


def test_prompts_labels_and_their_users_import_without_torch():
    out = _run("import sys\nimport franq.lm.prompts, franq.lm.labels, franq.calibrate, franq.equivalence, "
               "franq.evaluation.p_true, franq.faithfulness.chat_judge, franq.evaluation.units\n"
               "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    assert out.strip() == "[]"


def test_unknown_names_are_attribute_errors():
    import franq.lm

    with pytest.raises(AttributeError, match="no attribute 'SYSTEM_PROMPT'"):
        franq.lm.SYSTEM_PROMPT  # noqa: B018 - moved to franq.lm.prompts
