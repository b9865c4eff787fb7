"""The verifier's training loop (franq.fit.verifier.loop, .train, .scaling): a run stopped
after a checkpoint and started again ends with the weights of an uninterrupted run; a
checkpoint of another run is refused; pairs written by --write-pairs train the same model
as pairs built in place; the card's vector scaling is fitted and applied by Verifier."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from franq.errors import InputError
from franq.fit.verifier import loop, recipe
from franq.fit.verifier.data import sha256
from franq.fit.verifier.scaling import fit_vector_scaling
from franq.fit.verifier.train import fit_verifier, provenance, read_pairs, write_pairs
from tiny_encoders import WORDS, build_verifier

torch = pytest.importorskip("torch")


def _tiny_build(raw, datasets, manifest, *, seed=0):
    rng = random.Random(seed)
    pairs = [{"premise": " ".join(rng.sample(WORDS, 6)), "claim": " ".join(rng.sample(WORDS, 3)), "label": i % 3}
             for i in range(72)]
    return {"train": {"synthetic": pairs[:64]}, "dev": {"synthetic-nq": pairs[64:]}}


@pytest.fixture
def setup(tmp_path, monkeypatch):
    torch.set_num_threads(1)
    raw, datasets = tmp_path / "raw", tmp_path / "datasets"
    raw.mkdir()
    (datasets / "verifier").mkdir(parents=True)
    manifest = json.loads((Path(__file__).resolve().parents[1] / "datasets" / recipe.V7.manifest).read_text())
    (datasets / "verifier" / "m.json").write_text(json.dumps(manifest))
    for name in manifest["sources"]:
        (raw / name).write_bytes(b"")
    for name in recipe.DERIVED:
        (datasets / name).parent.mkdir(parents=True, exist_ok=True)
        (datasets / name).write_bytes(b"")
    monkeypatch.setattr("franq.fit.verifier.train.build", _tiny_build)
    encoder = build_verifier(tmp_path / "encoder", max_length=64)
    monkeypatch.setattr("franq.lm.resources.minilm_path", lambda path=None: encoder)
    return raw, datasets


def _fit(raw, datasets, out, **kw):
    return fit_verifier(raw=raw, datasets=datasets, manifest_path=datasets / "verifier" / "m.json", out=out, seed=0,
                        epochs=2.0, batch_size=8, lr=1e-3, warmup=0.1, name="tiny", **kw)


def _weights(path: Path) -> dict:
    from safetensors.numpy import load_file

    return load_file(str(path / "model.safetensors"))


def test_a_stopped_run_resumes_from_its_checkpoint_to_the_same_weights(setup, tmp_path, monkeypatch):
    raw, datasets = setup
    _fit(raw, datasets, tmp_path / "whole", checkpoint_every=0)
    real_train = loop.train

    def stop_after_checkpoint(*args, **kw):  # the machine goes away after step 10's checkpoint
        saved = loop._save

        def save_then_stop(path, run_id, step, *a):
            saved(path, run_id, step, *a)
            raise KeyboardInterrupt

        monkeypatch.setattr(loop, "_save", save_then_stop)
        return real_train(*args, **kw)

    monkeypatch.setattr(loop, "train", stop_after_checkpoint)
    with pytest.raises(KeyboardInterrupt):
        _fit(raw, datasets, tmp_path / "resumed", checkpoint_every=10)
    assert (tmp_path / "resumed" / loop.CHECKPOINT).is_file()
    monkeypatch.undo()
    monkeypatch.setattr("franq.fit.verifier.train.build", _tiny_build)
    monkeypatch.setattr("franq.lm.resources.minilm_path", lambda path=None: tmp_path / "encoder")
    card = _fit(raw, datasets, tmp_path / "resumed", checkpoint_every=10)
    assert card["training"]["resumed_from_step"] == 10 and card["training"]["steps"] == 16
    assert not (tmp_path / "resumed" / loop.CHECKPOINT).exists()  # a finished run keeps none
    a, b = _weights(tmp_path / "whole"), _weights(tmp_path / "resumed")
    assert max(float(np.abs(a[k].astype(np.float32) - b[k].astype(np.float32)).max()) for k in a) < 2e-3


def test_kept_checkpoints_and_a_stop_give_the_chosen_step(setup, tmp_path):
    raw, datasets = setup
    whole = _fit(raw, datasets, tmp_path / "whole", checkpoint_every=5, keep=tmp_path / "kept")
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["step-00005.pt", "step-00010.pt",
                                                                   "step-00015.pt"]
    assert whole["training"]["steps"] == 16 and "planned_steps" not in whole["training"]
    stopped = _fit(raw, datasets, tmp_path / "stopped", checkpoint_every=0, stop=10)
    assert stopped["training"]["steps"] == 10 and stopped["training"]["planned_steps"] == 16
    assert "stopped there, of a planned 16" in (tmp_path / "stopped" / "CARD.md").read_text()
    kept = torch.load(tmp_path / "kept" / "step-00010.pt", weights_only=True)["model"]
    a = _weights(tmp_path / "stopped")
    assert max(float(np.abs(a[k].astype(np.float32) - kept[k].half().float().numpy()).max()) for k in a) < 2e-3
    # a kept checkpoint copied in finishes the stopped run at once, with its weights
    (tmp_path / "finished").mkdir()
    (tmp_path / "finished" / loop.CHECKPOINT).write_bytes((tmp_path / "kept" / "step-00010.pt").read_bytes())
    card = _fit(raw, datasets, tmp_path / "finished", checkpoint_every=0, stop=10)
    assert card["training"]["resumed_from_step"] == 10
    b = _weights(tmp_path / "finished")
    assert all(np.array_equal(b[k], kept[k].half().numpy()) for k in b)
    with pytest.raises(InputError, match="past the stop"):
        (tmp_path / "finished" / loop.CHECKPOINT).write_bytes((tmp_path / "kept" / "step-00015.pt").read_bytes())
        _fit(raw, datasets, tmp_path / "finished", checkpoint_every=0, stop=10)
    with pytest.raises(InputError, match="outside the plan"):
        _fit(raw, datasets, tmp_path / "other", checkpoint_every=0, stop=99)


def test_a_checkpoint_of_another_run_is_refused(setup, tmp_path):
    raw, datasets = setup
    out = tmp_path / "v"
    out.mkdir()
    torch.save({"run": {"name": "other"}, "step": 3}, out / loop.CHECKPOINT)
    with pytest.raises(InputError, match="checkpoint of another run"):
        _fit(raw, datasets, out)


def test_pairs_written_once_train_the_same_model(setup, tmp_path):
    raw, datasets = setup
    manifest = datasets / "verifier" / "m.json"
    write_pairs(tmp_path / "pairs.json.xz", _tiny_build(raw, datasets, {}), sha256(manifest),
                provenance(raw, datasets, json.loads(manifest.read_text())))
    _fit(raw, datasets, tmp_path / "built", checkpoint_every=0)
    _fit(raw, datasets, tmp_path / "read", checkpoint_every=0, pairs_file=tmp_path / "pairs.json.xz")
    a, b = _weights(tmp_path / "built"), _weights(tmp_path / "read")
    assert all(np.array_equal(a[k], b[k]) for k in a)
    cards = [json.loads((tmp_path / d / "card.json").read_text()) for d in ("built", "read")]
    assert cards[0]["data"] == cards[1]["data"] and cards[0]["data_derived"] == cards[1]["data_derived"]
    with pytest.raises(InputError, match="built from manifest sha256"):
        read_pairs(tmp_path / "pairs.json.xz", "0" * 64)


def test_vector_scaling_lowers_the_nll_of_an_overconfident_class():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 600)
    logits = rng.normal(0, 1, (600, 3))
    logits[np.arange(600), labels] += 1.0
    logits[:, 1] += 2.0  # contradicted: confidently too often
    scale, bias, before, after = fit_vector_scaling(logits, labels, np.ones(600))
    assert after < before - 0.1 and bias[1] < bias[0] and bias[1] < bias[2] and (scale > 0).all()


def test_the_card_scaling_is_fitted_and_applied_by_the_verifier(setup, tmp_path):
    from franq.verifier import Verifier

    raw, datasets = setup
    card = _fit(raw, datasets, tmp_path / "v", checkpoint_every=0, scaling=True)
    cal = card["calibration"]
    assert cal["method"] == "vector_scaling" and cal["fitted_on"] == {"synthetic-nq": 8}
    assert cal["nll_after"] <= cal["nll_before"] + 1e-6
    pair = [("alpha beta gamma delta", "alpha beta")]
    v = Verifier(tmp_path / "v")
    enc = v.tokenizer([pair[0][0]], [pair[0][1]], return_tensors="pt")
    with torch.no_grad():
        logits = v.model(**enc).logits.float()[:, v.order].numpy()
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = np.exp(logp * np.array(cal["scale"]) + np.array(cal["bias"]))
    assert np.allclose(v.predict(pair), expected / expected.sum(-1, keepdims=True), atol=1e-4)
    saved = json.loads((tmp_path / "v" / "card.json").read_text())
    saved["calibration"]["scale"] = [1, -1, 1]
    (tmp_path / "v" / "card.json").write_text(json.dumps(saved))
    with pytest.raises(InputError, match="'calibration' must be"):
        Verifier(tmp_path / "v")


def test_fit_verifier_stop_overrides_the_recipes(monkeypatch, tmp_path):
    """`franq fit verifier --stop N` ends the recipe's plan at step N, `--stop 0` runs the whole
    plan (past a recipe's own stop: how a kept checkpoint goes on), no --stop keeps the recipe's."""
    from click.testing import CliRunner

    from franq.cli import main
    from franq.fit.verifier import recipe as recipes

    seen = []

    def fake_fit(recipe, **kw):
        seen.append(recipe.stop)
        (kw["out"]).mkdir(parents=True, exist_ok=True)
        (kw["out"] / "CARD.md").write_text("card")
        return {"training": {"total_seconds": 0}}

    monkeypatch.setattr(recipes, "fit_recipe", fake_fit)
    for extra in ([], ["--stop", "300"], ["--stop", "0"]):
        res = CliRunner().invoke(main, ["fit", "verifier", "--recipe", "v9", "-o", str(tmp_path / "out"),
                                        "--raw", str(tmp_path), *extra])
        assert res.exit_code == 0, res.output
    assert seen == [recipes.V9.stop, 300, None] and recipes.V9.stop == 200
