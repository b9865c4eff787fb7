"""The default-choosing benchmark (franq bench faithfulness-sets) on a few pairs of every dev set."""
from pathlib import Path

from franq.evaluation import faithfulness_sets as fs

ROOT = Path(__file__).resolve().parents[1]


def test_every_backend_is_built_once_and_scored_on_every_set(tmp_path, monkeypatch):
    built = []
    real = fs.text_scorer
    monkeypatch.setattr(fs, "text_scorer", lambda name, config: built.append(name) or real(name, config))
    report = fs.run(ROOT / "datasets", ROOT / "datasets" / "verifier" / "dev", backends=("lexical",), limit=5,
                    out=tmp_path / "r.md")
    assert built == ["lexical"]
    rows = [line for line in report.splitlines() if line.startswith("| lexical |") and "not run" not in line]
    sets = {line.split("|")[2].strip() for line in rows}
    assert {"synthetic-nq", "synthetic-expertqa", "nq-qa", "snli", "expertqa", "expertqa+cites", "wice"} <= sets
    assert (tmp_path / "r.md").read_text().startswith("Run ")
