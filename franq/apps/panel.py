"""The claim panel's verifier and verdict parts (:mod:`franq.apps.render`): P_supported,
P_contradicted and P_not_mentioned with a bar of the three, P(true | contradicted) when a
three-condition calibrator ran, and the passage window the verifier read them from (the
backend's own evidence, unlike the word-overlap window shown for other backends); the
verdict's reason and the knowledge term it read."""
from __future__ import annotations

import html
import re
from collections.abc import Sequence

import franq

WORD_RE = re.compile(r"(\w+)")


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _num(p) -> str:
    return "–" if p is None else f"{p:.3f}"


def has_conditions(c: franq.ClaimScore) -> bool:
    return c.p_contradicted is not None and c.p_not_mentioned is not None


def conditions_rows(c: franq.ClaimScore) -> list[tuple[str, str | None]]:
    """The panel rows of the three conditions (none for a backend without them)."""
    if not has_conditions(c):
        return []
    return [("P_supported (verifier)", _num(c.p_faithful)), ("P_contradicted (verifier)", _num(c.p_contradicted)),
            ("P_not_mentioned (verifier)", _num(c.p_not_mentioned)),
            ("P(true | contradicted), calibrated", _num(c.p_true_if_contradicted_calibrated)
             if c.p_true_if_contradicted_calibrated is not None else None)]


def verdict_rows(c: franq.ClaimScore) -> list[tuple[str, str | None]]:
    """The panel rows of the verdict's reason and of the knowledge term it read (its map's
    base rate and 90% interval, its ranking check), when the claim has them."""
    k = c.knowledge
    interval = None if k is None or k.low is None or k.high is None else f"[{k.low:.3f}, {k.high:.3f}]"
    return [("why", c.verdict_reason),
            ("knowledge term: P(true) from the model's own knowledge", None if k is None else _num(k.p_true)),
            ("knowledge term: its map's base rate", None if k is None or k.base_rate is None else _num(k.base_rate)),
            ("knowledge term: 90% interval of its map's step", interval),
            ("knowledge term: AUROC on the calibrator's natural claims (90% interval)",
             None if k is None or k.check_auroc is None else f"{k.check_auroc:.3f} [{k.check_low:.3f}, {k.check_high:.3f}]")]


def conditions_bar(c: franq.ClaimScore) -> str:
    if not has_conditions(c):
        return ""
    parts = (("cond-s", c.p_faithful or 0.0, "supported"), ("cond-c", c.p_contradicted, "contradicted"),
             ("cond-n", c.p_not_mentioned, "not mentioned"))
    return ('<div class="conditions" role="img" aria-label="'
            + _e(", ".join(f"{label} {p:.0%}" for _, p, label in parts)) + '">'
            + "".join(f'<span class="{cls}" style="width:{100 * p:.1f}%"></span>' for cls, p, _ in parts) + "</div>")


def evidence_html(c: franq.ClaimScore, passages: Sequence[franq.Passage] | None) -> str | None:
    """The verifier's evidence window with the claim's words in bold (None without one)."""
    w = c.evidence_window
    if w is None:
        return None
    passages = passages or ()
    title = passages[w.passage].title if w.passage < len(passages) else ""
    words = {t.lower() for t in WORD_RE.findall(c.claim.text)}
    text = "".join(f"<b>{_e(tok)}</b>" if tok.lower() in words else _e(tok) for tok in WORD_RE.split(w.text))
    verdict = max((("supports", c.p_faithful or 0.0), ("contradicts", c.p_contradicted or 0.0),
                   ("does not mention", c.p_not_mentioned or 0.0)), key=lambda t: t[1])[0]
    return (f'<div class="passage evidence">{conditions_bar(c)}<div class="passage-title">Verifier\'s evidence: '
            f'{_e(f"[{w.passage + 1}] {title}".strip())} <span class="muted">(characters {w.start}-{w.end}; '
            f'it {verdict} the claim)</span></div><blockquote>{text}</blockquote></div>')
