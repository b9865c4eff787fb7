"""The pages ``franq serve`` shows: ``GET /`` (paste a question, passages and an answer;
see its claims coloured; a token field for a service started with ``--token``) and the
plain ``/docs`` page listing the OpenAPI schema's routes (no script, nothing from a CDN)."""
from __future__ import annotations

from franq.apps import render


def docs_body(schema: dict) -> str:
    """The endpoints of the OpenAPI schema as a plain page (no script, nothing loaded from a CDN)."""
    esc = render._e
    rows = "".join(f"<tr><td>{esc(method.upper())}</td><td><code>{esc(path)}</code></td>"
                   f"<td>{esc(op.get('summary', ''))}</td></tr>"
                   for path, ops in schema.get("paths", {}).items() for method, op in ops.items())
    return (f"<header><h1>franq API</h1><div class='muted'>The schema: <a href='/openapi.json'>/openapi.json</a>; "
            f"the request and result fields: the module docstring of franq.apps.serve and docs/service.md.</div></header>"
            f"<table><thead><tr><th>method</th><th>path</th><th>summary</th></tr></thead><tbody>{rows}</tbody></table>")


PAGE_BODY = """
<header><h1>franq</h1><div class="muted">Paste a question, the retrieved passages and an answer: each claim
is coloured by P(true); click a claim for its components and the closest passage window.</div>{legend}</header>
<form id="score-form">
<label for="question">Question</label><input id="question" type="text" required>
<label for="passages">Passages (one per paragraph; separate passages with a blank line)</label>
<textarea id="passages" rows="8" required></textarea>
<label for="answer">Answer</label><textarea id="answer" rows="5" required></textarea>
<label for="token">Token (only if the service was started with --token)</label>
<input id="token" type="password" autocomplete="off">
<p><button id="submit" type="submit">Score</button> <span id="status" class="muted"></span></p>
</form>
<div id="answers"></div>
<script>
document.getElementById("score-form").addEventListener("submit", async function (e) {
  e.preventDefault();
  var status = document.getElementById("status"), out = document.getElementById("answers");
  status.textContent = "scoring…"; status.className = "muted";
  var passages = document.getElementById("passages").value.split(/\\n\\s*\\n/).map(function (p) { return p.trim(); })
    .filter(function (p) { return p; });
  var body = {question: document.getElementById("question").value, passages: passages,
              answer: document.getElementById("answer").value};
  try {
    var headers = {"content-type": "application/json"}, token = document.getElementById("token").value.trim();
    if (token) { headers["authorization"] = "Bearer " + token; }
    var r = await fetch("/score", {method: "POST", headers: headers, body: JSON.stringify(body)});
    var record = await r.json();
    if (!r.ok) { throw new Error(record.detail || r.statusText); }
    var v = await fetch("/render", {method: "POST", headers: headers, body: JSON.stringify(record)});
    var view = await v.json();
    if (!v.ok) { throw new Error(view.detail || v.statusText); }
    out.innerHTML = view.html;
    status.textContent = "done"; window.franqView.refresh();
  } catch (err) { status.textContent = String(err.message || err); status.className = "error"; }
});
</script>
"""
