"""One recipe per shipped verifier (franq.fit.verifier.recipe): `franq fit verifier` with no
options trains the shipped verifier's chain (v1 from MiniLM, then v7 from v1, each from its
manifest, lr and seed), and `franq fit shipped --check` compares the shipped card with that
recipe (no training) or, with --retrain-verifier, a retrained folder with the shipped one.
The training here is a tiny random encoder on a few pairs: no real 40-minute run."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from franq.cli import main
from franq.fit import shipped as table
from franq.fit.verifier import recipe
from franq.fit.verifier.train import fit_verifier
from franq.verifier.model import shipped_verifier_dir
from tiny_encoders import WORDS, build_verifier

ROOT = Path(__file__).resolve().parents[1]


def _shipped_card() -> dict:
    return json.loads((shipped_verifier_dir() / "card.json").read_text(encoding="utf-8"))


def test_the_shipped_card_is_the_shipped_recipe():
    assert recipe.SHIPPED.name == _shipped_card()["name"]
    assert recipe.check_card(_shipped_card(), ROOT / "datasets") == []
    assert [r.name for r in recipe.SHIPPED.chain()] == ["franq-verifier-minilm-v1", "franq-verifier-minilm-v7"]


def test_the_recipe_check_names_what_differs():
    card = _shipped_card()
    card["training"] = {**card["training"], "lr": 4e-5}
    card["continued_from"] = {**card["continued_from"], "sha256": "0" * 64}
    diffs = recipe.check_card(card, ROOT / "datasets")
    assert any(d.startswith("lr: card 4e-05, recipe 2e-05") for d in diffs)
    assert any(d.startswith("base weights sha256") for d in diffs) and len(diffs) == 2


def test_fit_shipped_check_says_the_verifier_got_the_recipe_check(tmp_path):
    result = CliRunner().invoke(main, ["fit", "shipped", "verifier", "--check", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "| verifier | - |" in result.output
    assert "recipe check, not retrained: the card matches the recipe" in result.output


def test_fit_shipped_verifier_without_check_or_retrain_says_what_it_costs(tmp_path):
    result = CliRunner().invoke(main, ["fit", "shipped", "verifier", "--out", str(tmp_path)])
    assert result.exit_code != 0 and "--retrain-verifier" in result.output


def _calls(monkeypatch) -> list[dict]:
    """Record fit_verifier's calls; each writes a verifier folder with its card."""
    calls = []

    def fake(**kw):
        calls.append(kw)
        out = Path(kw["out"])
        out.mkdir(parents=True, exist_ok=True)
        (out / "model.safetensors").write_bytes(kw["name"].encode())
        card = {"name": kw["name"], "training": {"steps": 1, "total_seconds": 0}}
        (out / "card.json").write_text(json.dumps(card), encoding="utf-8")
        (out / "CARD.md").write_text("card", encoding="utf-8")
        return card

    monkeypatch.setattr("franq.fit.verifier.train.fit_verifier", fake)
    return calls


def test_fit_verifier_with_no_options_trains_v7_on_the_committed_v1(tmp_path, monkeypatch):
    import subprocess

    if subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{recipe.V7.base_commit}^{{commit}}"],
                      capture_output=True).returncode:
        pytest.skip("no git history holding v1 (a shallow clone)")
    calls = _calls(monkeypatch)
    out = tmp_path / "v7"
    args = ["fit", "verifier", "-o", str(out), "--raw", str(tmp_path), "--datasets", str(ROOT / "datasets")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    [v7] = calls  # v1 comes from git, as committed, with the weights v7's card records
    assert recipe.check_card(_shipped_card(), ROOT / "datasets") == []
    assert json.loads((tmp_path / "v7-base" / "card.json").read_text())["name"] == "franq-verifier-minilm-v1"
    assert (v7["manifest_path"].name, v7["lr"], v7["base"], v7["out"]) == ("manifest-v7.json", 2e-5,
                                                                          str(tmp_path / "v7-base"), out)
    assert v7["name"] == _shipped_card()["name"]
    assert {k: v7[k] for k in ("seed", "epochs", "batch_size", "warmup")} == {
        k: _shipped_card()["training"][k] for k in ("seed", "epochs", "batch_size", "warmup")}
    assert CliRunner().invoke(main, [*args, "--retrain-base"]).exit_code == 0  # the committed v1 is not reused
    assert [c["name"] for c in calls[1:]] == ["franq-verifier-minilm-v1", "franq-verifier-minilm-v7"]


def test_fit_verifier_retrain_base_runs_the_chain_and_reuses_its_base(tmp_path, monkeypatch):
    calls = _calls(monkeypatch)
    out = tmp_path / "v7"
    args = ["fit", "verifier", "-o", str(out), "--raw", str(tmp_path), "--datasets", str(ROOT / "datasets")]
    assert CliRunner().invoke(main, [*args, "--retrain-base"]).exit_code == 0
    v1, v7 = calls
    assert (v1["manifest_path"].name, v1["lr"], v1["base"], v1["out"]) == ("manifest.json", 4e-5, None,
                                                                          tmp_path / "v7-base")
    assert v7["base"] == str(tmp_path / "v7-base") and v7["lr"] == 2e-5
    assert CliRunner().invoke(main, args).exit_code == 0
    assert [c["name"] for c in calls[2:]] == ["franq-verifier-minilm-v7"]  # the base is there: not trained again
    assert CliRunner().invoke(main, [*args, "--retrain-base"]).exit_code == 0  # a trained base is reused too
    assert [c["name"] for c in calls[3:]] == ["franq-verifier-minilm-v7"]
    assert CliRunner().invoke(main, [*args, "--recipe", "v1"]).exit_code == 0
    assert calls[-1]["base"] is None and calls[-1]["lr"] == 4e-5
    assert "known: v1, v7, v8, v9" in CliRunner().invoke(main, [*args, "--recipe", "v99"]).output


def test_every_recipe_names_a_committed_manifest_with_its_sha256():
    from franq.fit.verifier.data import sha256

    for r in recipe.RECIPES.values():
        assert sha256(ROOT / "datasets" / r.manifest) == r.manifest_sha256, r.name


def _tiny_data(raw: Path, datasets: Path) -> None:
    """Empty raw files and datasets files (the card hashes them) and the two real manifests."""
    raw.mkdir()
    (datasets / "verifier").mkdir(parents=True)
    for r in (recipe.V1, recipe.V7):
        shutil.copy(ROOT / "datasets" / r.manifest, datasets / r.manifest)
    for name in json.loads((ROOT / "datasets" / recipe.V7.manifest).read_text())["sources"]:
        (raw / name).write_bytes(b"")
    for name in recipe.DERIVED:
        (datasets / name).parent.mkdir(parents=True, exist_ok=True)
        (datasets / name).write_bytes(b"")


def _tiny_build(raw, datasets, manifest, *, seed=0):
    rng = random.Random(seed)
    pairs = [{"premise": " ".join(rng.sample(WORDS, 6)), "claim": " ".join(rng.sample(WORDS, 3)), "label": i % 3}
             for i in range(40)]
    return {"train": {"synthetic": pairs[:32]}, "dev": {"synthetic-nq": pairs[32:]}}


def test_a_tiny_retrain_of_the_chain_is_deterministic_and_compares_identical(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    raw, datasets = tmp_path / "raw", tmp_path / "datasets"
    _tiny_data(raw, datasets)
    monkeypatch.setattr("franq.fit.verifier.train.build", _tiny_build)
    encoder = build_verifier(tmp_path / "encoder", max_length=64)
    monkeypatch.setattr("franq.lm.resources.minilm_path", lambda path=None: encoder)
    for run in ("a", "b"):
        card = recipe.fit_recipe(recipe.SHIPPED, raw=raw, datasets=datasets, out=tmp_path / run)
    assert card["continued_from"]["name"] == "franq-verifier-minilm-v1" and card["training"]["lr"] == 2e-5
    assert recipe.compare_verifier(tmp_path / "a", tmp_path / "b") == (
        True, "retrained: weights identical; training pairs as shipped")
    other = fit_verifier(raw=raw, datasets=datasets, manifest_path=datasets / recipe.V7.manifest, out=tmp_path / "c",
                         seed=1, epochs=1.0, batch_size=32, lr=2e-5, warmup=0.06, name="x")
    assert other["name"] == "x"
    same, why = recipe.compare_verifier(tmp_path / "c", tmp_path / "b")
    assert not same and why.startswith("retrained: weights differ (largest |difference| ")


def test_retrain_verifier_compares_the_retrained_folder_with_the_shipped_one(tmp_path, monkeypatch):
    def copy(r, *, raw, datasets, out, base=None, **kw):
        shutil.copytree(shipped_verifier_dir(), out)
        return {}

    monkeypatch.setattr("franq.fit.verifier.recipe.fit_recipe", copy)
    monkeypatch.setenv("FRANQ_RAW_DATA", str(tmp_path))
    rows = table.rebuild(["verifier"], out=tmp_path / "out", check=True, retrain=True, echo=lambda m: None)
    assert rows[0]["identical"] and rows[0]["why"].startswith("retrained: weights identical")
