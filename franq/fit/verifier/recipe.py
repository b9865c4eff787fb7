"""The recipes of franq's verifiers, one definition each: what ``franq fit verifier`` trains
by default and what ``franq fit shipped --check`` compares the shipped card with.

The shipped verifier (``franq/data/verifier``, franq-verifier-minilm-v7) is a chain of two
trainings, each from the committed manifest named here:

    v1  the packaged all-MiniLM-L6-v2 fine-tuned on datasets/verifier/manifest.json, lr 4e-5
    v7  v1 fine-tuned further on datasets/verifier/manifest-v7.json, lr 2e-5
    v8  (a candidate, not shipped) v7 fine-tuned further on manifest-v8.json: v7's pairs and
        the contrastive pairs of franq.fit.verifier.contrast, lr 4e-5, 3 epochs, then vector
        scaling; trained on a GPU in 88 s (``--device cuda``), about 3 hours on one CPU thread
        (resumable: run the same command again after a stop)
    v9  (a candidate, not shipped) v7 fine-tuned further on manifest-v9.json: v7's pairs beside
        5,000 contrastive pairs (25.5% of the 19,608; no appended-place claims), lr 2e-5,
        a plan of 490 steps (0.8 epoch) stopped at step 200, the checkpoint chosen on the
        natural dev sets (ExpertQA, WiCE); about 50 minutes on one busy CPU thread

``franq fit verifier -o OUT`` runs the chain: the base into ``OUT-base`` (reused when its
card is there), then v7 into ``OUT`` (about 40 minutes on one CPU thread). The base is the
shipped v1's own weights, taken from git (``franq/data/verifier`` at commit 10e1ccf, checked
against the sha256 v7's card records), because today's code no longer builds v1's exact
training set: its ``synthetic`` source gives 6,822 pairs where v1's card says 6,737 (the
other sources and v7's sets are as recorded). Without git, or with ``retrain_base``, v1 is
trained by its recipe first (about 40 minutes more), and v7 then differs from the shipped
weights. The weights also depend on the CPU's float arithmetic.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recipe:
    """One verifier's recipe: the manifest (relative to the datasets folder), the verifier it
    starts from and the training settings. ``steps`` is what the shipped card recorded (it
    follows from the manifest's pair counts and the batch size)."""

    name: str
    manifest: str
    manifest_sha256: str
    lr: float
    steps: int
    base: Recipe | None = None       # None: the packaged all-MiniLM-L6-v2
    base_sha256: str | None = None   # the base's weights (model.safetensors) the shipped card records
    base_commit: str | None = None   # the commit whose franq/data/verifier holds those weights
    seed: int = 0
    epochs: float = 1.0
    batch_size: int = 32
    warmup: float = 0.06
    scaling: bool = False            # fit vector scaling of the three-way output on the dev sets
    stop: int | None = None          # end after this step of the plan (the checkpoint chosen on the dev sets)

    def chain(self) -> list[Recipe]:
        """The recipes to train in order, the base first."""
        return [*(self.base.chain() if self.base else []), self]

    def settings(self) -> dict:
        """The training settings as the card's ``training`` records them."""
        return {"seed": self.seed, "epochs": self.epochs, "batch_size": self.batch_size, "lr": self.lr,
                "warmup": self.warmup, "steps": self.steps}


V1 = Recipe("franq-verifier-minilm-v1", "verifier/manifest.json",
            "d0f2a34e0b11f4e6dbe27e850a9be1ada71b1494ffbb7439302b563d0de6920d", lr=4e-5, steps=530)
V7 = Recipe("franq-verifier-minilm-v7", "verifier/manifest-v7.json",
            "92d12af6ceda6b8df9190e0a698185e25e2952d9b617ef3b29eec16b9d95623d", lr=2e-5, steps=457, base=V1,
            base_sha256="317d1823958ea4d9d8a4dbb96782dfa4e2e7bf2c48eaa5afe57dfae3a8b88631", base_commit="10e1ccf")
V8 = Recipe("franq-verifier-minilm-v8", "verifier/manifest-v8.json", "a71f5cee51219cbf177ccb3dc353f047fdd38cdae5343c499bc55569b155e182", lr=4e-5, steps=3879, base=V7,
            base_sha256="19d888ac44739805308d5d37ae328259592947548b365aff507fd4b59aa1528c", base_commit="11901ac",
            epochs=3.0, scaling=True)
"""A candidate, not shipped (experiments/2026-11-28-verifier-v8-gpu): contrastive pairs at contrast commit 086751a."""
V9 = Recipe("franq-verifier-minilm-v9", "verifier/manifest-v9.json",
            "2d1a5d44dac5616e84fff749f2277c432c8796d6a33246ba680277a49ca28f28", lr=2e-5, steps=200, base=V7, epochs=0.8,
            base_sha256="19d888ac44739805308d5d37ae328259592947548b365aff507fd4b59aa1528c", base_commit="11901ac",
            stop=200)
"""A candidate trained on the CPU, not shipped (experiments/2026-11-28-verifier-v9-cpu): ``franq fit verifier
--recipe v9 -o OUT`` rebuilds it (step 200 of the 490-step plan: its best checkpoint of the two read on the
natural dev sets, still below v7 there)."""
RECIPES = {"v1": V1, "v7": V7, "v8": V8, "v9": V9}
SHIPPED = V7
"""The recipe of ``franq/data/verifier``."""
DERIVED = ("expertqa/train.jsonl", "expertqa/test.jsonl", "wice/fit.jsonl", "wice/heldout.jsonl", "nq-open/test.jsonl")
"""The committed datasets files a build reads (the card's ``data_derived`` hashes)."""


def base_dir_for(out: Path) -> Path:
    """Where the chain keeps the base it trains for ``out``: ``OUT-base`` beside it."""
    return out.with_name(out.name + "-base")


def base_from_git(recipe: Recipe, root: Path, out: Path) -> bool:
    """Write the base's folder as committed (``recipe.base_commit``) into ``out``; False
    (nothing kept) when ``root`` is no git checkout holding it or its weights are not the
    recorded ones."""
    import io
    import subprocess
    import tarfile

    from franq.fit.verifier.data import sha256

    if not recipe.base_commit:
        return False
    try:
        tar = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", recipe.base_commit,
                              "franq/data/verifier"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return False
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            if member.isfile():
                (out / Path(member.name).name).write_bytes(archive.extractfile(member).read())
    if sha256(out / "model.safetensors") != recipe.base_sha256:
        for f in out.iterdir():
            f.unlink()
        return False
    return True


def fit_recipe(recipe: Recipe = SHIPPED, *, raw: Path, datasets: Path, out: Path, base: Path | None = None,
               base_into: Path | None = None, retrain_base: bool = False, threads: int | None = None,
               log_every: int = 50, device: str = "cpu", pairs_file: Path | None = None,
               checkpoint_every: int = 200, keep: Path | None = None) -> dict:
    """Train ``recipe`` into ``out``; returns its card. With a base recipe and no ``base``
    folder, the base goes into ``base_into`` (default :func:`base_dir_for`; reused when it holds
    its card): from git as committed (:func:`base_from_git`, the checkout holding
    ``datasets``), else, or with ``retrain_base``, trained by its own recipe. A base whose
    weights differ from the recorded ones is trained on, with a warning (the result will
    not be the shipped bytes). ``device``, ``pairs_file``, ``checkpoint_every``, ``keep``: as
    :func:`~franq.fit.verifier.train.fit_verifier` (this recipe only, not its base); the
    recipe's ``stop`` ends its plan early."""
    from franq.fit.verifier.data import sha256
    from franq.fit.verifier.train import fit_verifier

    if recipe.base is not None and base is None:
        base = Path(base_into) if base_into is not None else base_dir_for(out)
        card = base / "card.json"
        committed = (base / "model.safetensors").is_file() and sha256(base / "model.safetensors") == recipe.base_sha256
        if card.is_file() and json.loads(card.read_text(encoding="utf-8")).get("name") == recipe.base.name \
                and not (retrain_base and committed):  # retrain_base: never the committed copy
            log.info("reusing the base %s in %s", recipe.base.name, base)
        elif not retrain_base and base_from_git(recipe, Path(datasets).resolve().parent, base):
            log.info("the base %s from git (%s) in %s", recipe.base.name, recipe.base_commit, base)
        else:
            log.info("training the base %s into %s first", recipe.base.name, base)
            fit_recipe(recipe.base, raw=raw, datasets=datasets, out=base, threads=threads, log_every=log_every)
    if base is not None and recipe.base_sha256 and sha256(Path(base) / "model.safetensors") != recipe.base_sha256:
        log.warning("the base in %s is not the weights %s recorded (sha256 %s...): training on from it anyway",
                    base, recipe.name, recipe.base_sha256[:12])
    card = fit_verifier(raw=raw, datasets=datasets, manifest_path=Path(datasets) / recipe.manifest, out=out,
                        seed=recipe.seed, epochs=recipe.epochs, batch_size=recipe.batch_size, lr=recipe.lr,
                        warmup=recipe.warmup, threads=threads, base=str(base) if base is not None else None,
                        log_every=log_every, name=recipe.name, device=device, pairs_file=pairs_file,
                        checkpoint_every=checkpoint_every, scaling=recipe.scaling, keep=keep, stop=recipe.stop)
    if card["training"]["steps"] != recipe.steps:
        log.warning("%d steps, the recipe recorded %d: the training set differs", card["training"]["steps"],
                    recipe.steps)
    return card


def check_card(card: dict, datasets: Path, recipe: Recipe = SHIPPED) -> list[str]:
    """What differs between a verifier's card and ``recipe`` (empty: it matches), with no
    training: the name, the manifest (name, recorded sha256 and the committed file's), the
    base (name, weights sha256), the training settings, and the committed datasets files a
    build reads (their sha256 now against the card's)."""
    from franq.fit.verifier.data import sha256

    diffs = []

    def same(what: str, recorded, wanted) -> None:
        if recorded != wanted:
            diffs.append(f"{what}: card {recorded}, recipe {wanted}")

    same("name", card.get("name"), recipe.name)
    same("manifest", Path(card.get("manifest", "")).name, Path(recipe.manifest).name)
    same("manifest sha256", card.get("manifest_sha256"), recipe.manifest_sha256)
    manifest = Path(datasets) / recipe.manifest
    same(f"{recipe.manifest} sha256", sha256(manifest) if manifest.is_file() else "missing", recipe.manifest_sha256)
    base = card.get("continued_from") or {}
    same("base", base.get("name"), recipe.base.name if recipe.base else None)
    same("base weights sha256", base.get("sha256"), recipe.base_sha256)
    training = card.get("training", {})
    for key, value in recipe.settings().items():
        same(key, training.get(key), value)
    for name in DERIVED:
        path = Path(datasets) / name
        same(f"{name} sha256", sha256(path) if path.is_file() else "missing", card.get("data_derived", {}).get(name))
    return diffs


def compare_verifier(rebuilt: Path, shipped: Path) -> tuple[bool, str]:
    """``(identical, why)`` for a retrained verifier folder against the shipped one: the
    weights byte for byte (else the largest absolute difference of a weight) and the
    training pair counts of the two cards."""
    import numpy as np
    from safetensors.numpy import load_file

    a, b = json.loads((rebuilt / "card.json").read_text("utf-8")), json.loads((shipped / "card.json").read_text("utf-8"))
    pairs = "training pairs as shipped" if a.get("train_pairs") == b.get("train_pairs") else \
        "training pairs differ from the shipped card's"
    if (rebuilt / "model.safetensors").read_bytes() == (shipped / "model.safetensors").read_bytes():
        return True, f"retrained: weights identical; {pairs}"
    x, y = load_file(str(rebuilt / "model.safetensors")), load_file(str(shipped / "model.safetensors"))
    if set(x) != set(y) or any(x[k].shape != y[k].shape for k in x):
        return False, f"retrained: other tensors than shipped; {pairs}"
    worst = max(float(np.max(np.abs(x[k].astype(np.float32) - y[k].astype(np.float32)), initial=0.0)) for k in x)
    return False, f"retrained: weights differ (largest |difference| {worst:.2e}); {pairs}"
