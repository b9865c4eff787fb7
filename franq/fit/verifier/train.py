"""Train one of franq's three-way verifiers (supported / contradicted / not mentioned), a
cross-encoder initialised from the packaged all-MiniLM-L6-v2 or from another verifier
(``franq fit verifier`` runs :mod:`franq.fit.verifier.recipe`'s recipes through this).

    manifest (datasets/verifier/manifest*.json) + seed
      -> pairs (franq.fit.verifier.data.build: SNLI, synthetic claims, nq-open, ExpertQA, WiCE)
      -> fine-tuning (AdamW, linear warm-up and decay, length-bucketed batches)
      -> OUT/model.safetensors (fp16), config.json, tokenizer files, card.json, CARD.md

Deterministic for a manifest, seed and thread count (torch.manual_seed, one data order).
The card records the data files with their sha256 and licence, the pair counts per source,
the settings, the dev metrics per source and the wall time.
"""
from __future__ import annotations

import json
import logging
import platform
import time
from pathlib import Path

import numpy as np

from franq.fit.verifier.data import LABELS, build, sha256
from franq.errors import InputError
from franq.lm.threads import configure_threads

log = logging.getLogger(__name__)
RECIPE_THREADS = 1
"""The verifier's recipe trains with one CPU thread (as the shipped one was); ``--threads`` overrides."""


def _bacc(y: np.ndarray, yhat: np.ndarray) -> float:
    return float(np.mean([np.mean(yhat[y == c] == c) for c in np.unique(y)]))


def dev_probabilities(verifier, pairs: list[dict]) -> np.ndarray:
    """``(n, 3)`` probabilities of dev pairs read the way ``franq score`` reads a claim: pairs
    with ``passages`` against every window of every passage (the verifier's windows, fitted
    to its token budget) combined by its aggregation rule; other pairs against their premise."""
    from franq.verifier.aggregate import aggregate

    if "passages" not in pairs[0]:
        return verifier.predict([(p["premise"], p["claim"]) for p in pairs])
    per_claim = verifier.window_probabilities([(p["passages"], p["claim"]) for p in pairs])
    return np.array([aggregate(probs, verifier.aggregation, relevance=verifier.relevance)[0]
                     for _, probs in per_claim])


def read_dev(verifier, dev: dict[str, list[dict]]) -> dict[str, np.ndarray]:
    """:func:`dev_probabilities` of every non-empty dev source, read once for the metrics and the scaling fit."""
    return {name: dev_probabilities(verifier, pairs) for name, pairs in dev.items() if pairs}


def evaluate(dev: dict[str, list[dict]], read: dict[str, np.ndarray]) -> dict:
    """Per dev source, from its probabilities ``read`` by :func:`read_dev` (the product's
    reading): three-way accuracy / balanced accuracy where the source has three labels;
    supported-vs-not BAcc at 0.5 and AUROC of P_supported everywhere."""
    from franq.evaluation.common import auroc

    metrics = {}
    for name, probs in read.items():
        pairs = dev[name]
        y = np.array([p["label"] for p in pairs])
        m = metrics.setdefault(name, {})
        if len(np.unique(y)) == 3:
            yhat = probs.argmax(1)
            m.update({"acc3": round(float(np.mean(yhat == y)), 4), "bacc3": round(_bacc(y, yhat), 4)})
        sup = (y == 0).astype(int)
        m.update({"n": len(pairs), "bacc": round(_bacc(sup, (probs[:, 0] > 0.5).astype(int)), 4),
                  "auroc": round(float(auroc(probs[:, 0], sup)), 4)})
    return metrics


def build_pairs(raw: Path, datasets: Path, manifest: dict, *, seed: int) -> dict[str, dict[str, list[dict]]]:
    """The manifest's pairs: :func:`franq.fit.verifier.data.build`'s sources, plus, where the
    manifest has a ``contrast`` entry, the contrastive pairs of
    :mod:`franq.fit.verifier.contrast` (train and dev, held apart by document)."""
    data = build(raw, datasets, manifest, seed=seed)
    if "contrast" in manifest:
        from franq.fit.verifier.contrast import contrastive_pairs

        spec = manifest["contrast"]
        pairs = contrastive_pairs(raw, datasets, seed=int(spec.get("seed", seed)), n_per_source=spec.get("n_per_source"),
                                  added_places=bool(spec.get("added_places", True)))
        data["train"]["contrast"] = [_pair(p) for p in pairs["train"]]
        data["dev"]["contrast"] = [_pair(p) for p in pairs["dev"]]
    return data


def _pair(p: dict) -> dict:
    label = p["label"] if isinstance(p["label"], int) else LABELS.index(p["label"])
    return {"premise": p["premise"], "claim": p["claim"], "label": label}


def _open(path: Path, mode: str):
    """gzip, or xz for a ``.xz`` name (a third of the size: what travels to a GPU machine)."""
    import gzip
    import lzma

    return (lzma.open if Path(path).suffix == ".xz" else gzip.open)(path, mode, encoding="utf-8")


def provenance(raw: Path, datasets: Path, manifest: dict) -> dict:
    """The sha256 of every file a build reads: the raw sources and the committed splits."""
    from franq.fit.verifier.recipe import DERIVED

    return {"sources": {f: sha256(raw / f) for f in manifest["sources"]},
            "derived": {name: sha256(datasets / name) for name in DERIVED}}


def read_pairs(path: Path, manifest_sha256: str) -> tuple[dict, dict]:
    """``(pairs, provenance)`` written by ``--write-pairs`` (gzip or xz JSON), refused when
    built from another manifest."""
    with _open(path, "rt") as f:
        data = json.load(f)
    if data.get("manifest_sha256") != manifest_sha256:
        raise InputError(f"fit verifier: {path} was built from manifest sha256 {data.get('manifest_sha256')}, "
                         f"not this recipe's {manifest_sha256}")
    return data["pairs"], data["provenance"]


def write_pairs(path: Path, data: dict, manifest_sha256: str, provenance: dict) -> None:
    """The pairs with the manifest's sha256 and the data files' (:func:`provenance`), so a
    machine without the raw data (a GPU) trains from them and writes the same card."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _open(path, "wt") as f:
        json.dump({"manifest_sha256": manifest_sha256, "provenance": provenance, "pairs": data}, f)


def fit_verifier(*, raw: Path, datasets: Path, manifest_path: Path, out: Path, seed: int, epochs: float,
                 batch_size: int, lr: float, warmup: float, name: str, threads: int | None = None,
                 base: str | None = None, log_every: int = 50, device: str = "cpu", pairs_file: Path | None = None,
                 checkpoint_every: int = 200, scaling: bool = False, keep: Path | None = None,
                 stop: int | None = None) -> dict:
    """Train and write the verifier directory ``out``; returns the card (``name``: the
    model's name in it, which results carry as ``verifier:<name>``). The settings have no
    defaults: a :class:`~franq.fit.verifier.recipe.Recipe` holds them. ``pairs_file``: pairs
    written earlier by :func:`write_pairs` for the same manifest (a GPU run reads what a CPU
    built); ``checkpoint_every``: steps between checkpoints (a run started again resumes,
    :mod:`franq.fit.verifier.loop`); ``scaling``: fit vector scaling on the dev sets
    (:mod:`franq.fit.verifier.scaling`) into the card; ``keep``, ``stop``: every checkpoint's
    weights kept in that folder, the plan ended after that step (:func:`franq.fit.verifier.loop.train`)."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from franq.fit.verifier import loop
    from franq.lm.resources import minilm_path

    t0 = time.time()
    torch.manual_seed(seed)
    threads = configure_threads(threads, RECIPE_THREADS)  # --threads, else the recipe's
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest_sha = sha256(manifest_path)
    max_length, window_words = int(manifest["max_length"]), int(manifest["window_words"])
    if pairs_file:
        data, built_from = read_pairs(pairs_file, manifest_sha)
    else:
        data, built_from = build_pairs(raw, datasets, manifest, seed=seed), provenance(raw, datasets, manifest)
    train = [p for pairs in data["train"].values() for p in pairs]
    log.info("%d training pairs in %.0fs: %s", len(train), time.time() - t0,
             {k: len(v) for k, v in data["train"].items()})
    base_dir = Path(base) if base else minilm_path()
    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    model = AutoModelForSequenceClassification.from_pretrained(
        base_dir, num_labels=3, id2label=dict(enumerate(LABELS)), label2id={k: i for i, k in enumerate(LABELS)},
        dtype=torch.float32)  # trained in float32 whatever the base is stored in (a shipped verifier: float16)
    done = loop.train(model, tokenizer, train, epochs=epochs, batch_size=batch_size, lr=lr, warmup=warmup,
                      seed=seed, max_length=max_length, out=out, device=device, checkpoint_every=checkpoint_every,
                      log_every=log_every, run_id={"name": name, "manifest_sha256": manifest_sha, "seed": seed},
                      keep=keep, stop=stop)
    out.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(out)
    tokenizer.save_pretrained(out)
    save_file({k: v.detach().to(torch.float16).contiguous() for k, v in model.state_dict().items()},
              str(out / "model.safetensors"), metadata={"format": "pt"})
    card = {
        "format": "franq-verifier", "version": 1, "name": name, "labels": list(LABELS),
        "max_length": max_length, "window_words": window_words, "window_overlap_sentences": 1,
        "base_model": manifest.get("base_model", str(base_dir)), "dtype": "float16",
        "data": [{"file": f, "licence": lic, "sha256": built_from["sources"][f]}
                 for f, lic in manifest["sources"].items()],
        "data_derived": built_from["derived"],
        "manifest": _shown(manifest_path), "manifest_sha256": manifest_sha,
        **({"continued_from": _base(base_dir)} if base else {}),
        "train_pairs": {k: {"n": len(v), "by_label": {LABELS[c]: sum(p["label"] == c for p in v) for c in range(3)}}
                        for k, v in data["train"].items()},
        "training": {"seed": seed, "epochs": epochs, "batch_size": batch_size, "lr": lr, "warmup": warmup,
                     "steps": done["steps"], **({"planned_steps": done["planned_steps"]} if stop else {}),
                     "threads": threads, "torch": torch.__version__,
                     "device": str(device) if device == "cpu" else torch.cuda.get_device_name(),
                     "machine": platform.machine(), "train_seconds": done["train_seconds"],
                     "resumed_from_step": done["resumed_from"], "total_seconds": round(time.time() - t0)},
    }
    (out / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    from franq.verifier import Verifier  # the dev sets are read as franq reads claims, by the written folder

    verifier = Verifier(out, device=device)
    read = read_dev(verifier, data["dev"])
    card["dev_metrics"] = evaluate(data["dev"], read)
    if scaling:
        from franq.fit.verifier.scaling import calibrate

        card["calibration"] = calibrate(data["dev"], read)
        (out / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
        scaled = Verifier(out, device=device)  # the card's scaling applied (it can move the window that decides)
        card["dev_metrics_scaled"] = evaluate(data["dev"], read_dev(scaled, data["dev"]))
    (out / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    (out / "CARD.md").write_text(card_markdown(card), encoding="utf-8")
    loop.finished(out)
    return card


def _shown(path: Path) -> str:
    """``path`` as the card names it: relative to the working directory where it lies under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path.name


def _base(base_dir: Path) -> dict:
    """The verifier training went on from: its card's name and its weights' sha256."""
    card = base_dir / "card.json"
    name = json.loads(card.read_text(encoding="utf-8")).get("name") if card.is_file() else base_dir.name
    return {"name": name, "sha256": sha256(base_dir / "model.safetensors")}


def _continued(card: dict) -> str:
    c = card.get("continued_from")
    return f", training on from {c['name']} (weights sha256 {c['sha256'][:12]})" if c else ""


def card_markdown(card: dict) -> str:
    lines = ["# franq verifier", "",
             "A three-way cross-encoder (supported / contradicted / not mentioned) fine-tuned from "
             f"{card['base_model']}; input: (passage window of about {card['window_words']} words, claim), "
             f"at most {card['max_length']} tokens; weights {card['dtype']}.", "",
             "Built by `franq fit verifier` (franq/fit/verifier/) from "
             f"{card.get('manifest', 'datasets/verifier/manifest.json')} (sha256 {card['manifest_sha256'][:12]}), "
             f"seed {card['training']['seed']}{_continued(card)}.", "",
             "## Data (only shared/data/SOURCES.md files and synthetic claims built from them)", "",
             "| file | licence | sha256 |", "|---|---|---|"]
    lines += [f"| {d['file']} | {d['licence']} | {d['sha256'][:16]} |" for d in card["data"]]
    lines += ["", "| training source | pairs | supported | contradicted | not mentioned |", "|---|---|---|---|---|"]
    lines += [f"| {k} | {v['n']} | " + " | ".join(str(v["by_label"][x]) for x in LABELS) + " |"
              for k, v in card["train_pairs"].items()]
    lines += ["", "## Dev metrics (held apart per source)", "",
              "| dev set | n | BAcc supported-vs-not @0.5 | AUROC | 3-way acc | 3-way BAcc |",
              "|---|---|---|---|---|---|"]
    for k, m in card["dev_metrics"].items():
        lines.append(f"| {k} | {m['n']} | {m['bacc']:.3f} | {m['auroc']:.3f} | {m.get('acc3', '')} | "
                     f"{m.get('bacc3', '')} |")
    cal = card.get("calibration")
    if cal:
        lines += ["", "## Output calibration", "",
                  "Vector scaling of the log-probabilities, softmax(scale * log p + bias) per label "
                  f"(supported, contradicted, not mentioned): scale {cal['scale']}, bias {cal['bias']}; fitted "
                  f"on the dev sets above ({', '.join(f'{k} {n}' for k, n in cal['fitted_on'].items())}), each "
                  f"weighted equally: NLL {cal['nll_before']} -> {cal['nll_after']}. franq applies it to every "
                  "window (franq.fit.verifier.scaling); the dev metrics above are before it."]
    t = card["training"]
    lines += ["", "## Training", "",
              f"{t['steps']} steps" + (f" (stopped there, of a planned {t['planned_steps']})" if t.get("planned_steps") else "")
              + f", batch {t['batch_size']}, lr {t['lr']}, {t['epochs']} epoch(s), "
              + (f"on {t['device']}, " if t.get("device", "cpu") != "cpu" else "") + f"{t['threads']} CPU thread(s), torch {t['torch']}, {t['train_seconds']} s training, "
              f"{t['total_seconds']} s in all.", ""]
    return "\n".join(lines)
