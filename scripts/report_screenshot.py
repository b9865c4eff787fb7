"""The screenshot of the bundled example's report in docs/ (docs/results.md, "See the claims").

    OMP_NUM_THREADS=1 python scripts/report_screenshot.py [--record example.json] [-o docs/report-example.png]

Scores the bundled example with the default (embedded) stack, as `franq score --example
--format json` does, unless --record gives that JSON record; renders the report, opens it
in headless Chromium (Debian's chromium and chromium-driver, selenium), clicks the fifth
claim ("It is located in Berlin, Germany.", read as "The tower is ...") to open its panel and
saves a 256-colour PNG.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chrome_driver():
    """A headless Chromium WebDriver (Debian's chromium and chromium-driver, selenium)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    binary = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    driver = shutil.which("chromedriver") or next(
        (p for p in ("/usr/lib/chromium/chromedriver", "/usr/bin/chromedriver") if os.path.exists(p)), None)
    if binary is None or driver is None:
        sys.exit(f"{'Chromium' if binary is None else 'chromedriver'} was not found (scripts/install_browser.sh)")
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--disable-extensions"):
        options.add_argument(arg)
    options.binary_location = binary
    return webdriver.Chrome(options=options, service=Service(driver))


def example_record() -> dict:
    from importlib import resources

    import franq

    data = json.loads(resources.files("franq").joinpath("data/example.json").read_text(encoding="utf-8"))
    example = franq.Example.from_dict(data)
    result = franq.Franq.from_config(franq.FranqConfig.from_dict({"calibration": {"threshold": 0.5}})).score_many([example])[0]
    return franq.result_record(example.id, result, example)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", help="a `franq score --example --format json` record (default: score it now)")
    ap.add_argument("-o", "--output", default=str(ROOT / "docs" / "report-example.png"))
    ap.add_argument("--claim", type=int, default=4, help="the claim whose panel is open (0-based)")
    args = ap.parse_args()
    from PIL import Image

    import franq
    from franq.apps import render

    record = json.loads(Path(args.record).read_text()) if args.record else example_record()
    line = next(franq.read_results(record, with_input=True, name=args.record or "the example's record"))
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(render.report_html([line], title="franq score --example --html"), encoding="utf-8")
        driver = chrome_driver()
        try:
            driver.set_window_size(1280, 900)
            driver.get(page.as_uri())
            driver.find_element("css selector", f'#a0 mark[data-claims="{args.claim}"]').click()
            shot = Path(tmp) / "shot.png"
            driver.save_screenshot(str(shot))
        finally:
            driver.quit()
        image = Image.open(shot).convert("RGB").quantize(colors=256, method=Image.Quantize.MAXCOVERAGE)
        image.save(args.output, optimize=True)
    print(f"wrote {args.output} ({Path(args.output).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
