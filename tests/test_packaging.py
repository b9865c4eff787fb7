"""Packaging: the README's install lines match the Makefile and setup.cfg, and every
folder of shipped files is a package setuptools is told about."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _install_facts():
    """The README, the extras `make test` installs (the Makefile's TEST_EXTRAS) and every extra setup.cfg declares."""
    import configparser
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    test_extras = re.search(r"^TEST_EXTRAS\s*:=\s*\[([\w,]+)\]", (root / "Makefile").read_text(), re.M).group(1)
    setup = configparser.ConfigParser()
    setup.read(root / "setup.cfg")
    return (root / "README.md").read_text(), test_extras, set(setup["options.extras_require"])


def test_readme_install_lines_match_the_makefile_and_setup_cfg():
    readme, test_extras, declared = _install_facts()
    said = re.findall(r"`make test`\s+installs\s+`\.\[([\w,]+)\]`", " ".join(readme.split()))
    assert said and set(said) == {test_extras}, f"README says make test installs {said}, the Makefile {test_extras}"
    extras = " ".join(readme[readme.index("Extras: "):].split("\n\n")[0].split())
    for extra in sorted(declared):
        assert f"franq[{extra}]" in extras, f"README's extras paragraph omits franq[{extra}]"


def test_every_directory_with_shipped_files_is_a_package_setuptools_is_told_about():
    """setuptools warned ~40 lines on every install ("Package 'franq.data' is absent from the
    `packages` configuration"): each folder holding files is a configured package, and its
    files are package data."""
    import configparser
    import fnmatch
    from pathlib import Path

    import setuptools

    root = Path(__file__).resolve().parents[1]
    setup = configparser.ConfigParser()
    setup.read(root / "setup.cfg")
    assert setup["options"]["packages"].strip() == "find_namespace:"
    found = setup["options.packages.find"]
    packages = set(setuptools.find_namespace_packages(
        str(root), include=found["include"].split(), exclude=found.get("exclude", "").split()))
    data = {k: v.split() for k, v in setup["options.package_data"].items()}
    for top in ("franq", "claims", "calibration"):
        for path in (root / top).rglob("*"):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            package = ".".join(path.parent.relative_to(root).parts)
            assert package in packages, f"{path.relative_to(root)}: {package} is not in setup.cfg's packages"
            if path.suffix != ".py":
                assert any(fnmatch.fnmatch(path.name, g) for g in data.get(package, ())), \
                    f"{path.relative_to(root)} is not package data of {package}"


def test_readme_links_resolve_in_a_clone():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "../shared" not in text and "/work/" not in text
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        assert (ROOT / target).exists(), f"README links to {target}, which is not in the repository"
    for section in ("franq report", "franq serve", "--format csv"):
        assert section in text, f"README has no example of {section}"
