"""The HTML report and the served page in a real browser (headless Chromium through
selenium): every claim is highlighted, colours match the P(true) buckets, the
claim panel shows the passage window, the threshold filter and the pages work. Each test
saves a screenshot in its temp dir. Skipped, saying why, where no Chromium can be found
(`make test` installs Debian's chromium and chromium-driver where it can, and then
requires them: see tests/servers.py)."""
from __future__ import annotations

import math

import pytest
from conftest import make_franq
from servers import chrome_driver, serve_in_thread

import franq
from franq.apps import render
from franq.apps.serve import create_app

ANSWER = ("The Eiffel Tower was built from 1887 to 1889 [1]. It was designed by Gustave Eiffel. "
          "It is made of solid gold. It is in Berlin. Sure! Its height is 330 metres.")
PASSAGES = [{"title": "Eiffel Tower", "text": "The Eiffel Tower is in Paris. It was built from 1887 to 1889. "
                                              "Gustave Eiffel's company designed it. It is 330 metres tall."}]


def _record(ident: str, ps: list[float], question: str = "When was the Eiffel Tower built?") -> dict:
    """A result record with one claim per sentence of ANSWER and the given P(true) values
    (the fifth sentence, "Sure!", is not check-worthy)."""
    sentences = ["The Eiffel Tower was built from 1887 to 1889", "It was designed by Gustave Eiffel.",
                 "It is made of solid gold.", "It is in Berlin.", "Sure!", "Its height is 330 metres."]
    claims, it = [], iter(ps)
    for s in sentences:
        start = ANSWER.index(s)
        spans = [[start, start + len(s)]] + ([[ANSWER.index("[1]") + 3, ANSWER.index("[1]") + 4]]
                                              if s.endswith("1889") else [])
        if s == "Sure!":
            claims.append({"claim": {"text": s, "char_spans": spans, "note": "greeting"}, "status": "not_check_worthy"})
            continue
        p = next(it)
        claims.append({"claim": {"text": s, "char_spans": spans}, "status": "scored", "p_true_raw": p / 10,
                       "p_true_calibrated": p, "p_faithful": 0.8, "uq_faith": 0.5, "uq_unfaith": 0.4,
                       "signals": {"log_claim_prob": -3.0}})
    return {"id": ident, "question": question, "answer": ANSWER, "claims": claims, "passages": PASSAGES,
            "mode": "long", "model": "test", "faithfulness": "lexical-v1", "warnings": [],
            "calibrator": {"path": "calibrator.json", "variant": "condition", "source": "user", "fitted_for": {}}}


def _rgb(hex_colour: str) -> str:
    h = hex_colour.lstrip("#")
    return "rgb({}, {}, {})".format(*(int(h[i:i + 2], 16) for i in (0, 2, 4)))


@pytest.fixture(scope="module")
def browser():
    driver = chrome_driver()
    yield driver
    driver.quit()


def _check_highlights(browser, section_css: str) -> int:
    """Every scored claim of each shown answer is inside a mark whose colour is its
    bucket's; returns the number of marks checked."""
    marks = browser.execute_script("""
        return Array.from(document.querySelectorAll(arguments[0] + ' mark.claim')).map(m => ({
            claims: m.dataset.claims, p: m.dataset.p, bucket: m.dataset.bucket,
            section: m.closest('.answer').id, colour: getComputedStyle(m).backgroundColor}));""", section_css)
    scored = browser.execute_script("""
        return Array.from(document.querySelectorAll(arguments[0] + ' tr.claim-row[data-p]')).map(r =>
            r.closest('.answer').id + ':' + r.dataset.claims);""", section_css)
    highlighted = {f"{m['section']}:{k}" for m in marks for k in m["claims"].split()}
    assert scored and set(scored) <= highlighted
    for m in marks:
        if m["bucket"] == "none":
            assert m["colour"] == _rgb(render.NOT_SCORED_COLOUR)
        else:
            assert int(m["bucket"]) == render.bucket(float(m["p"]))
            assert m["colour"] == _rgb(render.BUCKETS[int(m["bucket"])][1]), m
    return len(marks)


def test_report_in_chromium(browser, tmp_path):
    records = [_record(f"r{i}", ps) for i, ps in enumerate(
        [[0.95, 0.7, 0.1, 0.3, 0.5], [0.9, 0.85, 0.8, 0.99, 0.65], [0.15, 0.45, 0.61, 0.05, 0.9]])]
    path = tmp_path / "report.html"
    lines = franq.read_results(records, with_input=True)  # as `franq report` reads them
    path.write_text(render.report_html(lines, page_size=2, threshold=0.5), encoding="utf-8")
    browser.get(path.as_uri())

    # pages: two answers on the first page, the third on the next
    shown = browser.execute_script("return Array.from(document.querySelectorAll('#answers > .answer'))"
                                   ".filter(s => !s.hidden).map(s => s.id)")
    assert shown == ["a0", "a1"]
    assert _check_highlights(browser, "#a0") >= 6 and _check_highlights(browser, "#a1") >= 6
    # the index lists the answers from the least likely claim up
    order = browser.execute_script("return Array.from(document.querySelectorAll('.index tr[data-target]'))"
                                   ".map(r => r.dataset.target)")
    assert order == ["a2", "a0", "a1"]

    # a click on a claim opens the panel with its components and the passage window
    assert not browser.find_element("id", "panel").is_displayed()
    browser.find_element("css selector", '#a0 mark[data-claims="2"]').click()
    panel = browser.find_element("id", "panel")
    assert panel.is_displayed()
    text = panel.text
    assert "It is made of solid gold." in text and "P_faithful (raw)" in text and "0.100 (calibrated)" in text
    assert "No passage shares a content word with this claim." in text
    browser.find_element("css selector", '#a0 mark[data-claims="0"]').click()
    text = panel.text
    assert "Claim 1: The Eiffel Tower was built from 1887 to 1889" in text and "0.950 (calibrated)" in text
    assert "Closest passage window: [1] Eiffel Tower" in text and "It was built from 1887 to 1889." in text
    browser.save_screenshot(str(tmp_path / "report.png"))

    # the threshold marks the claims below it; "only answers with a claim below it" filters
    browser.execute_script("""const t = document.getElementById('threshold'); t.value = 0.7;
                              t.dispatchEvent(new Event('input'));""")
    below = browser.execute_script("return Array.from(document.querySelectorAll('#a1 mark.below'))"
                                   ".map(m => m.dataset.claims)")
    assert below == ["5"]  # only 0.65 < 0.7 in the second answer
    browser.execute_script("""const t = document.getElementById('threshold'); t.value = 0.3;
                              t.dispatchEvent(new Event('input'));""")
    browser.find_element("id", "only-low").click()
    shown = browser.execute_script("return Array.from(document.querySelectorAll('#answers > .answer'))"
                                   ".filter(s => !s.hidden).map(s => s.id)")
    assert shown == ["a0", "a2"]  # the second answer has no claim below 0.3

    # the index jumps to the page of an answer
    browser.find_element("id", "only-low").click()
    browser.find_element("css selector", '.index tr[data-target="a2"] a').click()
    shown = browser.execute_script("return Array.from(document.querySelectorAll('#answers > .answer'))"
                                   ".filter(s => !s.hidden).map(s => s.id)")
    assert shown == ["a2"]
    assert _check_highlights(browser, "#a2") >= 6
    browser.save_screenshot(str(tmp_path / "report-page2.png"))
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_report_of_a_real_pipeline_result_highlights_every_scored_claim(browser, tiny_lm, tmp_path):
    example = franq.Example.from_dict({"question": "Who designed the tower?", "passages": PASSAGES,
                                       "answer": "Sure! " + ANSWER + "\n\n- It opened in 1889.\n- It is iron."})
    result = make_franq(tiny_lm).score_many([example])[0]
    path = tmp_path / "real.html"
    path.write_text(render.report_html([render.Line("x", result, example)]), encoding="utf-8")
    browser.get(path.as_uri())
    segments = render.segments(result.answer, result.claims)
    assert _check_highlights(browser, "#a0") == sum(1 for _, _, ks in segments if ks)
    browser.save_screenshot(str(tmp_path / "real.png"))


def test_served_page_scores_and_shows_the_same_view(browser, tiny_lm, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait

    with serve_in_thread(create_app(make_franq(tiny_lm))) as url:
        browser.get(url + "/")
        browser.find_element("id", "question").send_keys("When was the Eiffel Tower built?")
        browser.find_element("id", "passages").send_keys(PASSAGES[0]["text"] + "\n\nParis is in France.")
        browser.find_element("id", "answer").send_keys(ANSWER)
        browser.find_element("id", "submit").click()
        WebDriverWait(browser, math.inf).until(  # no time limit: a busy machine only makes scoring slower
            lambda b: b.find_element("id", "status").text in ("done",) or "error" in b.find_element(
                "id", "status").get_attribute("class"))
        assert browser.find_element("id", "status").text == "done"
        n = _check_highlights(browser, "#answers")
        assert n >= 5
        browser.find_elements("css selector", "#answers mark.claim")[0].click()
        panel = browser.find_element("id", "panel")
        assert panel.is_displayed() and "Closest passage window" in panel.text
        browser.save_screenshot(str(tmp_path / "served.png"))
        # a bad request shows the service's message
        browser.find_element("id", "answer").clear()
        browser.find_element("id", "answer").send_keys("   ")
        browser.find_element("id", "submit").click()
        WebDriverWait(browser, math.inf).until(
            lambda b: "error" in b.find_element("id", "status").get_attribute("class"))
        assert "'answer' is empty" in browser.find_element("id", "status").text


def test_without_chromium_the_browser_tests_skip_saying_why_or_fail_when_required(monkeypatch):
    import servers

    pytest.importorskip("selenium")
    monkeypatch.setattr(servers.shutil, "which", lambda name: None)
    monkeypatch.setattr(servers.os.path, "exists", lambda path: False)
    monkeypatch.delenv("FRANQ_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="Chromium was not found; install Debian's chromium"):
        servers.chrome_driver()
    monkeypatch.setenv("FRANQ_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="FRANQ_REQUIRE_BROWSER is set but Chromium was not found"):
        servers.chrome_driver()


class CountingPipeline:
    """The tiny pipeline, counting the scoring calls that reach it."""

    def __init__(self, inner):
        self.inner, self.lm, self.config, self.components = inner, inner.lm, inner.config, inner.components
        self.calls = 0

    def score_many(self, examples, mode=None):
        self.calls += 1
        return self.inner.score_many(examples, mode=mode)


CROSS_SITE_PAGE = """<!DOCTYPE html><html><body><p>another site</p><script>
async function attempt(url, init) {
  try { var r = await fetch(url, init); return "status " + r.status + " type " + r.type; }
  catch (e) { return "failed: " + e.name; }
}
window.tryScore = async function (service, body) {
  return {
    json: await attempt(service + "/score", {method: "POST", headers: {"content-type": "application/json"}, body: body}),
    plain: await attempt(service + "/score", {method: "POST", headers: {"content-type": "text/plain"}, body: body}),
    plain_no_cors: await attempt(service + "/score", {method: "POST", mode: "no-cors", body: body}),
    read_health: await attempt(service + "/health", {}),
  };
};
</script></body></html>"""


def test_a_page_on_another_loopback_port_can_neither_score_nor_read(browser, tiny_lm):
    """Issue 28: a page served from another port (another origin) POSTs to the service with
    fetch, as JSON (a CORS preflight the service never grants) and as text/plain (a "simple
    request" the browser sends without asking, refused by the service: 415 and 403). No
    scoring call reaches the model, and the page reads nothing."""
    import json
    from http.server import BaseHTTPRequestHandler

    from servers import chat_server

    class Page(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = CROSS_SITE_PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    pipeline = CountingPipeline(make_franq(tiny_lm))
    with serve_in_thread(create_app(pipeline)) as service, chat_server(Page) as other:
        page = other.base_url.removesuffix("/v1") + "/"
        assert page.rsplit(":", 1)[1] != service.rsplit(":", 1)[1]
        browser.get(page)
        body = json.dumps({"question": "q", "passages": ["The tower is in Paris."], "answer": "It is in Paris."})
        browser.set_script_timeout(600)  # generous: a busy machine only makes it slower
        result = browser.execute_async_script(
            "var done = arguments[arguments.length - 1]; window.tryScore(arguments[0], arguments[1]).then(done);",
            service, body)
        assert result["json"].startswith("failed") and result["plain"].startswith("failed"), result
        assert result["read_health"].startswith("failed"), result  # no CORS grant: nothing is read
        assert result["plain_no_cors"] == "status 0 type opaque", result  # sent, unreadable, and refused:
        assert pipeline.calls == 0  # no request from the other site reached the model
        # the service's own page still scores (same origin)
        browser.get(service + "/")
        own = browser.execute_async_script(
            "var done = arguments[arguments.length - 1]; fetch('/score', {method: 'POST', headers: "
            "{'content-type': 'application/json'}, body: arguments[0]}).then(r => done(r.status));", body)
        assert own == 200 and pipeline.calls == 1
