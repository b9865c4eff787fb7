"""`franq config show`: every effective config value and where it came from (default, file,
flag, environment), through the real `franq` command."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

from click.testing import CliRunner

from franq.cli import main
from franq.config import SECTIONS, FranqConfig
from franq.limits import LIMITS

CONFIG = """mode = "auto"
[model]
device = "cpu"
[faithfulness]
name = "lexical"
[equivalence.nli]
model = "/models/nli"
[limits]
passages = 2000
"""


def show(*args, env=None) -> dict:
    res = CliRunner().invoke(main, ["config", "show", "--json", *args], env=env)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_config_show_names_a_source_for_every_key_of_the_config():
    proc = subprocess.run([sys.executable, "-m", "franq", "config", "show"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if " = " in line]
    assert lines and all(" # default" in line or " # env " in line for line in lines), proc.stdout
    assert 'mode = "long"  # default' in proc.stdout and "\n[limits]\n" in proc.stdout
    keys = {f"{name}.{f.name}" for name, cls in SECTIONS.items() for f in dataclasses.fields(cls)}
    assert keys | {"mode"} | {f"limits.{n}" for n in LIMITS} <= set(show())


def test_config_show_says_which_values_the_file_the_flags_and_the_environment_set(tmp_path):
    path = tmp_path / "my.toml"
    path.write_text(CONFIG, encoding="utf-8")
    got = show("--config", str(path), "--threshold", "0.4", "--prior", "0.9", "--dtype", "bfloat16", "--limit", "claims=9",
               "--decomposer-base-url", "http://localhost:8000/v1", "--decomposer-model", "m",
               env={"OMP_NUM_THREADS": "3", "FRANQ_HOME": str(tmp_path / "home")})
    assert got["mode"] == {"value": "auto", "source": f"file {path}"}
    assert got["model.device"]["source"] == f"file {path}" and got["faithfulness.name"]["value"] == "lexical"
    assert got["equivalence.nli.model"] == {"value": "/models/nli", "source": f"file {path}"}
    assert got["limits.passages"] == {"value": 2000, "source": f"file {path}"}
    assert got["limits.claims"] == {"value": 9, "source": "flag --limit claims=9"}
    assert got["calibration.threshold"] == {"value": 0.4, "source": "flag --threshold"}
    assert got["calibration.prior"] == {"value": 0.9, "source": "flag --prior"}
    assert got["model.dtype"] == {"value": "bfloat16", "source": "flag --dtype"}
    assert got["decomposer.backend"] == {"value": "openai", "source": "flag --decomposer-base-url"}
    assert got["model.threads"] == {"value": 3, "source": "env OMP_NUM_THREADS"}
    assert got["decomposer.cache_dir"] == {"value": str(tmp_path / "home" / "decompose"), "source": "env FRANQ_HOME"}
    assert got["uq.n_samples"] == {"value": FranqConfig().uq.n_samples, "source": "default"}


def test_config_show_flags_win_over_the_file_and_the_file_over_the_environment(tmp_path):
    path = tmp_path / "my.json"
    path.write_text(json.dumps({"model": {"threads": 2}, "faithfulness": {"name": "lexical"}}), encoding="utf-8")
    got = show("--config", str(path), "--faithfulness", "combined", env={"OMP_NUM_THREADS": "3"})
    assert got["faithfulness.name"] == {"value": "combined", "source": "flag --faithfulness"}
    assert got["model.threads"] == {"value": 2, "source": f"file {path}"}


def test_config_show_names_an_api_key_variable_never_its_value():
    secret = "sk-test-0123456789abcdef"
    res = CliRunner().invoke(main, ["config", "show"], env={"OPENAI_API_KEY": secret})
    assert res.exit_code == 0 and secret not in res.output
    assert 'api_key_env = "OPENAI_API_KEY"  # default ($OPENAI_API_KEY is set)' in res.output


def test_config_show_refuses_a_bad_config_in_one_line_naming_the_key(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[model]\ndevcie = "cpu"\n', encoding="utf-8")
    res = CliRunner().invoke(main, ["config", "show", "--config", str(path)])
    assert res.exit_code != 0 and "devcie" in res.output and "Traceback" not in res.output


def test_config_show_takes_fast_as_score_does():
    assert show("--fast")["mode"] == {"value": "fast", "source": "flag --fast"}
    res = CliRunner().invoke(main, ["config", "show", "--fast", "--mode", "long"])
    assert res.exit_code == 2 and "--fast is --mode fast; it cannot go with --mode long" in res.output
