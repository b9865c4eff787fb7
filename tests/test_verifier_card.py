"""The verifier's card says how to rebuild it: the manifest it was trained from and, when it
was trained further from another verifier, that verifier's name and weights hash."""
from __future__ import annotations

import json
from pathlib import Path

from franq.fit.verifier.train import _base, _shown, card_markdown
from franq.fit.verifier.data import sha256
from franq.verifier.model import shipped_verifier_dir


def test_shipped_card_names_its_manifest_and_the_verifier_it_continued():
    card = json.loads((shipped_verifier_dir() / "card.json").read_text(encoding="utf-8"))
    root = Path(__file__).resolve().parents[1]
    assert sha256(root / card["manifest"]) == card["manifest_sha256"]
    md = card_markdown(card)
    assert f"from {card['manifest']} (sha256 {card['manifest_sha256'][:12]})" in md
    assert f"training on from {card['continued_from']['name']} (weights sha256 " \
           f"{card['continued_from']['sha256'][:12]})" in md
    assert md == (shipped_verifier_dir() / "CARD.md").read_text(encoding="utf-8")


def test_base_reads_the_base_card_name_and_hashes_its_weights(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    assert _base(tmp_path) == {"name": tmp_path.name, "sha256": sha256(tmp_path / "model.safetensors")}
    (tmp_path / "card.json").write_text(json.dumps({"name": "franq-verifier-x"}), encoding="utf-8")
    assert _base(tmp_path)["name"] == "franq-verifier-x"


def test_manifest_path_shown_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()
    assert _shown(tmp_path / "m" / "manifest.json") == "m/manifest.json"
    assert _shown(Path("/elsewhere/manifest.json")) == "manifest.json"


def test_a_card_without_the_new_fields_reads_as_before():
    card = {"base_model": "b", "window_words": 64, "max_length": 160, "dtype": "float16", "manifest_sha256": "a" * 64,
            "training": {"seed": 0, "steps": 1, "batch_size": 1, "lr": 1, "epochs": 1, "threads": 1, "torch": "t",
                         "train_seconds": 1, "total_seconds": 1}, "data": [], "train_pairs": {}, "dev_metrics": {}}
    md = card_markdown(card)
    assert "from datasets/verifier/manifest.json (sha256 aaaaaaaaaaaa), seed 0." in md
