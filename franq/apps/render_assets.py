"""The report's inline CSS and script (:mod:`franq.apps.render`): static text, kept apart
from the HTML builders. The colour classes of the P(true) buckets are added by render.py."""

BASE_CSS = ("""
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#222;background:#fafafa}
main{max-width:960px;margin:0 auto;padding:1em 1.5em 4em}
h1{font-size:1.4em;margin:.3em 0}h2{font-size:1.1em;margin:.2em 0}
.muted{color:#666;font-size:.9em}
.legend{margin:.5em 0}.legend-item{margin-right:1em;white-space:nowrap;font-size:.9em}
.swatch{display:inline-block;width:.9em;height:.9em;border-radius:2px;margin-right:.35em;vertical-align:-.1em}
.controls{position:sticky;top:0;background:#fafafa;padding:.5em 0;border-bottom:1px solid #ddd;z-index:1;
display:flex;gap:1.5em;flex-wrap:wrap;align-items:center}
.answer{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1em;margin:1em 0}
.answer-text{font-size:1.05em;line-height:1.9;margin:.6em 0;white-space:pre-wrap}
mark.claim{color:#111;border-radius:3px;padding:.1em .05em;cursor:pointer}
mark.claim.selected{outline:2px solid #1d4ed8}
mark.claim.below,.claim-row.below td:first-child{box-shadow:inset 0 -3px 0 #a40000}
table{border-collapse:collapse;width:100%;font-size:.9em}
td,th{text-align:left;padding:.2em .5em;border-bottom:1px solid #eee;vertical-align:top}
.claims td:nth-child(-n+4),.index td:first-child{white-space:nowrap}
.claim-row{cursor:pointer}.claim-row:hover{background:#f3f6ff}
.warnings{color:#8a5a00;font-size:.85em}
.index{margin:1em 0}.index summary{cursor:pointer;font-weight:600}
#panel{position:fixed;right:0;top:0;bottom:0;width:min(420px,90vw);overflow:auto;background:#fff;
border-left:1px solid #ccc;box-shadow:-4px 0 12px rgba(0,0,0,.08);padding:1em 1.2em;z-index:2}
#panel-close{float:right;font-size:1.3em;border:none;background:none;cursor:pointer}
@media (min-width:1100px){body.panel-open main{margin:0 440px 0 1em}}
.detail-claim{font-weight:600;margin-bottom:.5em}
.kv th{width:55%;font-weight:500;color:#444}
.passage{margin-top:.8em}.passage-title{font-weight:600;font-size:.9em}
blockquote{margin:.4em 0;padding:.4em .8em;border-left:3px solid #1d4ed8;background:#f3f6ff}
form textarea,form input[type=text]{width:100%;box-sizing:border-box;font:inherit}
form label{display:block;margin:.5em 0 .2em;font-weight:600}
.error{color:#a40000;font-weight:600}
""")


PANEL_CSS = """
.conditions{display:flex;height:.7em;border-radius:3px;overflow:hidden;margin:.3em 0 .6em}
.conditions span{display:block}.cond-s{background:#1a9850}.cond-c{background:#d73027}.cond-n{background:#bbb}
.evidence blockquote{border-left-color:#555}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var panel = document.getElementById("panel"), body = document.getElementById("panel-body");
  var page = 0;
  function threshold() { var t = document.getElementById("threshold"); return t ? parseFloat(t.value) : 0.5; }
  function show(section, ks) {
    document.querySelectorAll("mark.selected").forEach(function (m) { m.classList.remove("selected"); });
    var html = "";
    ks.forEach(function (k) {
      var d = document.getElementById("a" + section.dataset.n + "-c" + k);
      if (d) { html += d.innerHTML; }
      section.querySelectorAll("mark.claim").forEach(function (m) {
        if (m.dataset.claims.split(" ").indexOf(String(k)) >= 0) { m.classList.add("selected"); }
      });
    });
    body.innerHTML = html;
    panel.hidden = false;
    document.body.classList.add("panel-open");
  }
  document.addEventListener("click", function (e) {
    var t = e.target.closest ? e.target.closest("[data-claims]") : null;
    if (t && t.closest(".answer")) { show(t.closest(".answer"), t.dataset.claims.split(" ")); return; }
    if (e.target.id === "panel-close") { panel.hidden = true; document.body.classList.remove("panel-open"); return; }
    var row = e.target.closest ? e.target.closest("tr[data-target]") : null;
    if (row) { e.preventDefault(); goTo(row.dataset.target); }
  });
  function sections() { return Array.prototype.slice.call(document.querySelectorAll("#answers > .answer")); }
  function visible() {
    var only = document.getElementById("only-low"), t = threshold();
    return sections().filter(function (s) {
      return !(only && only.checked) || (s.dataset.min !== "" && parseFloat(s.dataset.min) < t);
    });
  }
  function size() { var c = document.querySelector(".controls"); return c ? parseInt(c.dataset.pageSize, 10) : 1e9; }
  function refresh() {
    var t = threshold(), out = document.getElementById("threshold-value");
    if (out) { out.textContent = t.toFixed(2); }
    document.querySelectorAll("[data-p]").forEach(function (el) {
      el.classList.toggle("below", parseFloat(el.dataset.p) < t);
    });
    var shown = visible(), n = size(), pages = Math.max(1, Math.ceil(shown.length / n));
    page = Math.min(page, pages - 1);
    sections().forEach(function (s) { s.hidden = true; });
    shown.forEach(function (s, i) { s.hidden = Math.floor(i / n) !== page; });
    var info = document.getElementById("page-info");
    if (info) { info.textContent = "page " + (page + 1) + " of " + pages + " (" + shown.length + " answers)"; }
    document.querySelectorAll(".index tr[data-target]").forEach(function (r) {
      r.hidden = shown.indexOf(document.getElementById(r.dataset.target)) < 0;
    });
  }
  function goTo(id) {
    var s = document.getElementById(id), i = visible().indexOf(s);
    if (i < 0) { return; }
    page = Math.floor(i / size()); refresh(); s.scrollIntoView();
  }
  ["threshold", "only-low"].forEach(function (id) {
    var el = document.getElementById(id);
    if (el) { el.addEventListener("input", function () { page = 0; refresh(); }); el.addEventListener("change", refresh); }
  });
  var prev = document.getElementById("prev"), next = document.getElementById("next");
  if (prev) { prev.addEventListener("click", function () { page = Math.max(0, page - 1); refresh(); }); }
  if (next) { next.addEventListener("click", function () { page += 1; refresh(); }); }
  window.franqView = {refresh: refresh, show: show};
  refresh();
})();
"""
