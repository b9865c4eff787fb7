"""The HTML view of scored answers shared by ``franq report``, ``franq score --html`` and
``franq serve`` (the CSV view is :mod:`franq.apps.claims_csv`).

Both read typed results: lines read back by ``franq.read_results(..., with_input=True)``
(anything with ``id``, ``result`` (an :class:`~franq.AnswerScore`) and ``example`` (the
:class:`~franq.Example` the line carried: passages, claim labels, ``meta``; or None)), or
bare ``AnswerScore`` objects. A report can be made from any output file later.

The HTML view (after the FRANQ paper's figure 15): the answer with each claim's
characters highlighted on a colour scale of P(true), the calibrated value when a
calibrator ran, else the raw mix. A click on a claim opens a side panel with P_faithful,
the raw and calibrated components, the status and reason, and the window of the
passages that shares the most words with the claim (a reading aid found by word
overlap, not the faithfulness backend's evidence; with the ``verifier`` backend the panel
shows P_supported, P_contradicted, P_not_mentioned and the verifier's own evidence window
instead, :mod:`franq.apps.panel`). An index lists the answers from the
least likely claim up; a threshold filter marks the claims below it; long batches
paginate. No network at view time: CSS and script are inline.
"""
from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import franq
from franq import claim_p_true
from franq.apps.spans import segments  # noqa: F401 - part of this module's interface
from franq.apps.panel import conditions_rows, evidence_html, verdict_rows
from franq.apps.render_assets import BASE_CSS, PANEL_CSS, SCRIPT

BUCKETS = (  # (upper bound of P(true), colour, label); a claim is in the first bucket whose bound exceeds it
    (0.2, "#e8655d", "P(true) < 0.2"),
    (0.4, "#f4a259", "0.2 – 0.4"),
    (0.6, "#f5d76e", "0.4 – 0.6"),
    (0.8, "#b9dc7b", "0.6 – 0.8"),
    (1.01, "#6cc26c", "≥ 0.8"),
)
NOT_SCORED_COLOUR = "#dddddd"
PAGE_SIZE = 20
WORD_RE = re.compile(r"\w+", re.UNICODE)
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+")
STOPWORDS = frozenset("""a an the and or but of in on at to for from by with as is are was were be been being it its
this that these those he she they them his her their there which who whom what when where why how not no do does did
has have had i you we our your my me us so than then also into over under about after before""".split())


class Line(NamedTuple):
    """A result to show: the input's id, the result, and the input it carried (or None)."""

    id: str | None
    result: franq.AnswerScore
    example: franq.Example | None = None


def as_line(result) -> Line:
    """``result`` as a :class:`Line`: a line read back by ``franq.read_results(...,
    with_input=True)`` (its ``id``, ``result`` and ``example``) or a bare ``AnswerScore``."""
    if isinstance(result, franq.AnswerScore):
        return Line(None, result)
    try:
        return Line(result.id, result.result, result.example)
    except AttributeError:
        raise TypeError(f"expected a result read back by franq.read_results(..., with_input=True) or an "
                        f"AnswerScore, got {type(result).__name__}") from None


def as_lines(results: Iterable) -> list[Line]:
    return [as_line(r) for r in results]


def bucket(p: float) -> int:
    """Index of the colour bucket of ``p`` in :data:`BUCKETS`."""
    return next(i for i, (upper, _, _) in enumerate(BUCKETS) if p < upper)


def least_p_true(result: franq.AnswerScore) -> float | None:
    ps = [p for c in result.claims if c.status == "scored" and (p := claim_p_true(c)) is not None]
    return min(ps) if ps else None


# ---------------------------------------------------------------------------- passage windows (segments: franq.apps.spans)
def _words(text: str) -> list[str]:
    return [w for w in WORD_RE.findall(text.lower()) if w not in STOPWORDS]


def passage_windows(passages: Sequence[franq.Passage], *, max_sentences: int = 2) -> list[tuple[dict, frozenset]]:
    """Every run of up to ``max_sentences`` sentences of each passage, with its content
    words (computed once per answer, then matched against each claim)."""
    out = []
    for i, p in enumerate(passages):
        sents = [s for s in SENTENCE_END_RE.split(p.text) if s.strip()]
        for start in range(len(sents)):
            for n in range(1, min(max_sentences, len(sents) - start) + 1):
                window = " ".join(sents[start:start + n])
                out.append(({"passage": i, "title": p.title, "text": window}, frozenset(_words(window))))
    return out


def passage_window(claim_text: str, passages: Sequence[franq.Passage], *, windows=None) -> dict | None:
    """The run of up to two sentences of one passage sharing the most content words with
    the claim (the shorter on a tie): ``{"passage", "title", "text", "overlap"}`` (overlap:
    the share of the claim's content words found there), or None when no passage shares
    a word. ``windows``: :func:`passage_windows` of ``passages``, when already computed."""
    target = set(_words(claim_text))
    if not target:
        return None
    best, best_key = None, (0, 0)
    for window, words in (passage_windows(passages) if windows is None else windows):
        key = (len(target & words), -len(window["text"]))
        if key[0] > 0 and key > best_key:
            best, best_key = window, key
    return None if best is None else {**best, "overlap": round(best_key[0] / len(target), 3)}


# ---------------------------------------------------------------------------- HTML
def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _num(p) -> str:
    if p is None:
        return "–"
    return f"{p:.2e}" if 0 < p < 0.001 else f"{p:.3f}"


def _highlight_words(window: str, claim_text: str) -> str:
    target = set(_words(claim_text))
    return "".join(f"<b>{_e(tok)}</b>" if tok.lower() in target else _e(tok)
                   for tok in re.split(r"(\w+)", window))


def _detail_html(n: int, k: int, c: franq.ClaimScore, labels: dict, passages: Sequence[franq.Passage] | None,
                 windows) -> str:
    text = c.claim.text
    note = f": {c.claim.note}" if c.claim.note else ""
    rows = [("P(true)", _num(claim_p_true(c)) + (" (calibrated)" if c.p_true_calibrated is not None else " (raw)")),
            ("status", c.status + note),
            ("verdict", c.verdict), *verdict_rows(c),
            ("P_faithful (raw)", _num(c.p_faithful)),
            ("P_faithful (calibrated)", _num(c.p_faithful_calibrated)
             if c.p_faithful_calibrated is not None else None),
            ("UQ_faith (raw)", _num(c.uq_faith)),
            ("UQ_unfaith (raw)", _num(c.uq_unfaith)),
            ("P(true) raw mix", _num(c.p_true_raw)),
            *((f"P(true | {condition}), calibrated", _num(v)) for condition, v in (
                ("supported", c.p_true_if_supported_calibrated), ("not supported", c.p_true_if_unfaithful_calibrated),
                ("not mentioned", c.p_true_if_not_mentioned_calibrated)) if v is not None),
            *conditions_rows(c),
            ("label is_true", labels.get("is_true")), ("label is_faithful", labels.get("is_faithful"))]
    table = "".join(f"<tr><th>{_e(a)}</th><td>{_e(b)}</td></tr>" for a, b in rows if b is not None)
    window = passage_window(text, passages, windows=windows) if passages else None
    evidence = evidence_html(c, passages)
    if evidence is not None:
        passage = evidence
    elif window is not None:
        title = f"[{window['passage'] + 1}] {window['title']}".strip()
        passage = (f'<div class="passage"><div class="passage-title">Closest passage window: {_e(title)} '
                   f'<span class="muted">({window["overlap"]:.0%} of the claim\'s content words)</span></div>'
                   f'<blockquote>{_highlight_words(window["text"], text)}</blockquote></div>')
    else:  # passages None: the record carries none; (): retrieval returned none
        passage = '<div class="passage muted">' + ("No passage shares a content word with this claim." if passages else
                  "The record carries no passages (written by an older franq)." if passages is None else
                  "No passages: retrieval returned nothing, so the claim was scored closed-book (P_faithful = 0).") + "</div>"
    return (f'<div class="detail" id="a{n}-c{k}" hidden><div class="detail-claim">'
            f'<span class="swatch {_claim_class(c)}"></span> Claim {k + 1}: {_e(text)}</div>'
            f'<table class="kv">{table}</table>{passage}</div>')


def _scored_p(c: franq.ClaimScore) -> float | None:
    """P(true) of a scored claim; None for a claim that was not scored."""
    return claim_p_true(c) if c.status == "scored" else None


def _claim_class(c: franq.ClaimScore) -> str:
    p = _scored_p(c)
    return "ns" if p is None else f"pb{bucket(p)}"


def answer_html(line, n: int) -> str:
    """One answer's section: question, highlighted answer, claims table, hidden details."""
    line = as_line(line)
    result, example = line.result, line.example
    passages = None if example is None else example.passages
    labels = () if example is None else example.claim_labels or ()  # the input's labels of each claim
    answer, claims = result.scored_answer, result.claims
    body = []
    for a, b, ks in segments(answer, claims):
        piece = _e(answer[a:b])
        if not ks:
            body.append(piece)
            continue
        scored = [(p, k) for k in ks if (p := _scored_p(claims[k])) is not None]
        if scored:
            p, _ = min(scored)
            body.append(f'<mark class="claim pb{bucket(p)}" data-claims="{" ".join(map(str, ks))}" '
                        f'data-p="{p:.6f}" data-bucket="{bucket(p)}" title="P(true) {_num(p)}">{piece}</mark>')
        else:
            body.append(f'<mark class="claim ns" data-claims="{" ".join(map(str, ks))}" data-bucket="none" '
                        f'title="not scored">{piece}</mark>')
    rows, details = [], []
    windows = passage_windows(passages or ())
    for k, c in enumerate(claims):
        p = _scored_p(c)
        status = c.status + (f" ({c.claim.note})" if c.claim.note and c.status != "scored" else "")
        data_p = "" if p is None else f' data-p="{p:.6f}"'
        rows.append(f'<tr class="claim-row" data-claims="{k}"{data_p}><td>{k + 1}</td>'
                    f'<td><span class="swatch {_claim_class(c)}"></span>{_num(p) if data_p else "–"}</td>'
                    f'<td>{_num(c.p_faithful)}</td><td>{_e(c.verdict or "")}</td>'
                    f'<td>{_e(status)}</td><td>{_e(c.claim.text)}</td></tr>')
        details.append(_detail_html(n, k, c, labels[k] if k < len(labels) else {}, passages, windows))
    low = least_p_true(result)
    meta = None if example is None else example.meta
    head = f'<h2><span class="muted">#{n + 1}</span> {_e(result.question)}</h2>'
    sub = " · ".join(x for x in (f"id {_e(line.id)}" if line.id is not None else "",
                                 f"{_e(result.mode)} form" if result.mode else "",
                                 "no passages (scored closed-book)" if passages == () else "",
                                 f"least likely claim {_num(low)}" if low is not None else "no scored claim",
                                 _answer_score(result), _decision_text(result),
                                 f"meta {_e(json.dumps(meta, ensure_ascii=False))}" if meta else "") if x)
    warnings = "".join(f'<li>{_e(w)}</li>' for w in result.warnings)
    return (f'<section class="answer" id="a{n}" data-n="{n}" data-min="{"" if low is None else f"{low:.6f}"}">'
            f'{head}<div class="muted">{sub}</div><div class="answer-text">{"".join(body)}</div>'
            f'<table class="claims"><thead><tr><th>#</th><th>P(true)</th><th>P_faithful</th><th>verdict</th>'
            f'<th>status</th><th>claim</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'{f"<ul class=warnings>{warnings}</ul>" if warnings else ""}{"".join(details)}</section>')


def legend_html() -> str:
    items = "".join(f'<span class="legend-item"><span class="swatch pb{i}"></span>{_e(label)}</span>'
                    for i, (_, _, label) in enumerate(BUCKETS))
    return f'<div class="legend">{items}<span class="legend-item"><span class="swatch ns"></span>not scored</span></div>'


def _stack_line(result: franq.AnswerScore) -> str:
    cal = result.calibrator
    moved = "" if cal is None or cal.prior is None else f", moved to prior {cal.prior:g}"
    calib = f"calibrated ({cal.variant}, {cal.source}{moved})" if cal is not None else "raw (no calibrator)"
    stack = result.stack
    return f"model {_e(stack.model)} · faithfulness {_e(stack.faithfulness)} · P(true) {_e(calib)}"


def _answer_score(result: franq.AnswerScore) -> str:
    """P(every claim true) and the weakest claim, in words ("" when no claim was scored)."""
    p, weakest = result.p_all_true, result.weakest_claim
    if p is None or weakest is None:
        return ""
    return _e(f"P(every claim true) {_small(p)} (claims taken as independent) · weakest claim "
              f"#{weakest.index + 1}: {weakest.reason}")


def _decision_text(result: franq.AnswerScore) -> str:
    """After an answering app's fallback or abstention: what was shown instead of the
    highlighted (rejected) answer ("" otherwise)."""
    d = result.decision
    if d is None or d.rejected_answer is None:
        return ""
    shown = "abstained" if d.answer is None else f"answer shown: {d.answer}"
    return _e(f"{d.action} ({d.verify} score {d.score:.3f} < {d.threshold:g}): {shown}; the answer highlighted "
              f"here is the rejected one")


def _small(p: float) -> str:
    return f"{p:.2e}" if p < 0.001 else f"{p:.3f}"


def index_html(lines: Sequence[Line]) -> str:
    lows = [least_p_true(line.result) for line in lines]
    order = sorted(range(len(lines)), key=lambda n: (lows[n] is None, lows[n] or 0.0, n))
    rows = []
    for n in order:
        low, q = lows[n], lines[n].result.question
        q = q if len(q) <= 90 else q[:89] + "…"
        cls = f"pb{bucket(low)}" if low is not None else "ns"
        r = lines[n].result
        p_all, weakest = r.p_all_true, r.weakest_claim
        why = "" if weakest is None else f"#{weakest.index + 1}: {weakest.reason}"
        rows.append(f'<tr data-target="a{n}" data-min="{"" if low is None else f"{low:.6f}"}">'
                    f'<td><span class="swatch {cls}"></span>{_num(low)}</td>'
                    f'<td>{"–" if p_all is None else _small(p_all)}</td><td>{_e(lines[n].id or "")}</td>'
                    f'<td><a href="#a{n}">{_e(q)}</a></td><td>{len(r.claims)}</td><td>{_e(why)}</td></tr>')
    return ('<details class="index" open><summary>Answers by their least likely claim</summary>'
            '<table><thead><tr><th>least P(true)</th><th>P(every claim true)</th><th>id</th><th>question</th>'
            '<th>claims</th><th>weakest claim, why</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></details>')


def controls_html(threshold: float, page_size: int) -> str:
    return (f'<div class="controls" data-page-size="{page_size}">'
            f'<label>threshold <input id="threshold" type="range" min="0" max="1" step="0.01" value="{threshold}">'
            f' <output id="threshold-value">{threshold:.2f}</output></label>'
            '<label><input id="only-low" type="checkbox"> only answers with a claim below it</label>'
            '<span id="pager"><button id="prev" type="button">‹ prev</button> <span id="page-info"></span> '
            '<button id="next" type="button">next ›</button></span></div>')


def document_html(title: str, body: str) -> str:
    """A complete page: inline CSS and script, the claim panel, ``body``."""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_e(title)}</title>'
            f'<style>{CSS}</style></head><body><main id="main">{body}</main>'
            '<aside id="panel" hidden><button id="panel-close" type="button" aria-label="close">×</button>'
            '<div id="panel-body"></div></aside>'
            f'<script>{SCRIPT}</script></body></html>')


def report_html(results: Iterable, *, title: str = "franq report", threshold: float = 0.5,
                page_size: int = PAGE_SIZE) -> str:
    """The self-contained report of ``results`` (read back, or bare AnswerScores; in input order)."""
    lines = as_lines(results)
    n_claims = sum(len(line.result.claims) for line in lines)
    stack = _stack_line(lines[0].result) if lines else ""
    header = (f'<header><h1>{_e(title)}</h1><div class="muted">{len(lines)} answers · {n_claims} claims · '
              f'{stack}</div>{legend_html()}</header>')
    sections = "".join(answer_html(line, n) for n, line in enumerate(lines))
    return document_html(title, header + controls_html(threshold, page_size) + index_html(lines)
                         + f'<div id="answers">{sections}</div>')


_BUCKET_CSS = "".join(f".pb{i}{{background:{colour}}}" for i, (_, colour, _) in enumerate(BUCKETS))
CSS = BASE_CSS + PANEL_CSS + ".ns{background:" + NOT_SCORED_COLOUR + "}" + _BUCKET_CSS
