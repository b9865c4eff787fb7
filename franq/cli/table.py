"""What the commands print for people: the per-claim table of one scored answer, the
decision line of ``franq answer``, and the fit report of ``franq fit calibrator``."""
from __future__ import annotations

from franq.cli.options import printable
from franq.stages.preset import FAST_STACK_NONE, is_fast_stack
from franq.types import AnswerScore
from franq.verdicts import probability_text, verifier_alone


def _fmt(p: float | None, small: bool = False) -> str:
    """Three decimals (``small``: a value under .01 in scientific notation). A probability strictly
    inside (0, 1) never prints as 1.000 or 0.000 (:func:`~franq.verdicts.probability_text`)."""
    if p is None:
        return "-"
    if small and p < 0.01:
        return f"{p:.2e}"
    return probability_text(p, 3)


def preset_name(result: AnswerScore) -> str:
    """"long", "short", or "short (observer)" when a given short answer was scored as an observer."""
    preset = result.stack.get("mode", result.mode)
    return result.mode if preset == result.mode else f"{result.mode} ({preset})"


def calibrator_text(result: AnswerScore) -> str:
    """Which calibrator produced the calibrated values: its variant and file, or "uncalibrated"."""
    cal = result.calibrator
    if cal is None:
        return "uncalibrated"
    moved = "" if cal.prior is None else f", moved to a share of true claims of {cal.prior:g}"
    return f"{cal.variant}, {cal.source} file {cal.path}{moved}"


def provenance(result: AnswerScore) -> str:
    """What produced the P(true) values, in one line a newcomer can follow: the scorer pair
    (UQ_faith / UQ_unfaith), the faithfulness backend, the preset and the calibrator."""
    s = result.stack
    if is_fast_stack(s):  # the fast presets: the verifier alone
        return (f"scored by: the verifier alone (preset {s.get('mode', result.mode)}, no causal LM), faithfulness "
                f"{s.faithfulness}, calibrator: {calibrator_text(result)}; P(true) raw = P_faith")
    return (f"scored by: UQ_faith {s.get('uq_faith', '?')} / UQ_unfaith {s.get('uq_unfaith', '?')} (preset "
            f"{preset_name(result)}, {_model(result.stack.model)}), faithfulness {result.stack.faithfulness}, "
            f"calibrator: {calibrator_text(result)}; P(true) raw = P_faith * UQ_faith + (1 - P_faith) * UQ_unfaith")


def _model(name: str) -> str:
    return "no causal LM" if name == FAST_STACK_NONE else f"model {name}"  # chat: the scorers name the chat model


def format_table(result: AnswerScore, width: int = 100, *, threshold: float | None = None) -> str:
    """Per claim: calibrated P(true) (when a calibrator ran), then the raw values, the
    verdict when a threshold was given (``threshold``: the one it was given at, to name);
    a footer says what produced the numbers."""
    source = calibrator_text(result) if result.calibrator else "none (raw values only)"
    s = result.stack
    verdicts = threshold is not None or any(c.verdict is not None for c in result.claims)
    vhead = (f"  {'verdict':<12}", f"  {'':<12}") if verdicts else ("", "")
    three = any(c.p_contradicted is not None for c in result.claims)  # the verifier backend: P_contradicted too
    lines = [
        f"Question: {printable(result.question)}",
        printable(f"Model: {result.stack.model} | preset: {preset_name(result)} | "
                  f"faithfulness: {result.stack.faithfulness} | "
                  f"UQ_faith: {s.get('uq_faith', '?')} | UQ_unfaith: {s.get('uq_unfaith', '?')}"),
        f"Calibration: {printable(source)}",
        "",
        f"{'#':>2}  {'P(true)':>8}  {'P(true)':>8}  {'P_faith':>8}  "
        + (f"{'P_contr.':>8}  " if three else "") + f"{'UQ_faith':>8}  {'UQ_unf.':>8}{vhead[0]}  claim",
        f"{'':>2}  {'calib.':>8}  {'raw':>8}  {'raw':>8}  " + (f"{'raw':>8}  " if three else "")
        + f"{'raw':>8}  {'raw':>8}{vhead[1]}",
    ]
    for i, c in enumerate(result.claims, 1):
        text = printable(c.claim.text if c.status == "scored" else f"[{c.status}: {c.claim.note}] {c.claim.text}")
        if len(text) > width:
            text = text[: width - 1] + "…"
        verdict = f"  {c.verdict or '-':<12}" if verdicts else ""
        lines.append(f"{i:>2}  {_fmt(c.p_true_calibrated):>8}  {_fmt(c.p_true_raw, True):>8}  "
                     f"{_fmt(c.p_faithful):>8}  " + (f"{_fmt(c.p_contradicted):>8}  " if three else "")
                     + f"{_fmt(c.uq_faith, True):>8}  {_fmt(c.uq_unfaith, True):>8}{verdict}  {text}")
    lines += ["", *answer_score_lines(result), "", printable(provenance(result))]
    if verdicts:
        at = "the threshold" if threshold is None else f"{threshold:g}"
        if any(verifier_alone(c) for c in result.claims):
            lines.append(f"verdict (the verifier alone, no knowledge term): likely_true when the passages support a "
                         f"claim and P(true) >= {at}; uncertain when they do not and P(true) >= {at} (then only a "
                         f"base rate); else likely_false")
        else:
            lines.append(f"verdict: uncertain when the passages do not mention a claim and the model's own knowledge "
                         f"gives no usable signal; else likely_true when P(true) >= {at} (the calibrated value when "
                         f"a calibrator ran, else the raw mix), else likely_false")
        lines += [printable(f"  #{i} {c.verdict}: {c.verdict_reason}")
                  for i, c in enumerate(result.claims, 1) if c.verdict is not None and c.verdict_reason]
    for w in result.warnings:
        lines.append(f"warning: {printable(w)}")
    return "\n".join(lines)


def answer_score_lines(result: AnswerScore) -> list[str]:
    """The per-answer score: P(every claim true), taking the claims as independent, and the weakest claim."""
    p, weakest = result.p_all_true, result.weakest_claim
    if p is None or weakest is None:
        return ["P(every claim true): - (no scored claim)"]
    return [f"P(every claim true): {_fmt(p, True)} (the product of the claims' P(true), as if independent)",
            printable(f"weakest claim: #{weakest.index + 1}, P(true) {_fmt(weakest.p_true, True)}: {weakest.reason}")]


def format_decision(result: AnswerScore) -> str:
    d = result.decision
    if d is None:
        return ""
    lines = ["", f"Decision: {d.action} ({d.verify} score {d.score:.3f} "
                 f"{'>=' if d.action == 'answer' else '<'} threshold {d.threshold:g}; fallback {d.fallback})"]
    if d.rejected_answer is not None:
        lines.append(printable(f"Rejected answer (the claims above are its claims): {d.rejected_answer.strip()}"))
    lines.append(printable(f"The claims' P(true) above: {provenance(result)}"))
    return "\n".join(lines)


def format_fit_report(report: dict, output: str, report_path: str) -> str:
    name = report.get("variant") or f"xgboost on {report['features']}"
    lines = [f"fitted {name} on {report['n_claims']} labelled claims ({report['n_true']} true, "
             f"{report['n_false']} false; skipped {report['skipped']}) in {report['fit_seconds']:.3f} s",
             f"stack: {report['fitted_for']}"]
    for cond in ("faithful", "unfaithful", "supported", "contradicted", "not_mentioned"):
        c = report.get("counts", {}).get(cond)
        if c:
            lines.append(f"  {cond:>10}: {c['n']} claims, weight {c['weight']:g} "
                         f"({c['true']:g} true, {c['false']:g} false)")
    if "split" in report.get("counts", {}):
        s = report["counts"]["split"]
        lines.append(f"  split by gold label: {s['gold']}, " + (f"by P_faithful > 0.5: {s['threshold']}" if "threshold"
                     in s else f"by the verifier's likeliest condition: {s.get('argmax')}"))
    ece = report["train_ece"]
    lines.append("train ECE: " + ", ".join(f"{k} {v:.4f}" for k, v in ece.items()))
    h = report.get("holdout")
    if h:
        def num(v):
            return "n/a (one class)" if v is None else f"{v:.4f}"

        lines.append(f"held apart ({h['fraction']:g} of the answers, seed {h['seed']}): {h['n_claims']} claims of "
                     f"{h['n_answers']} answers ({h['n_true']} true)")
        for metric in ("ece", "brier", "auroc"):
            lines.append(f"  held-apart {metric.upper() if metric != 'brier' else 'Brier'}: raw "
                         f"{num(h['raw'][metric])}, calibrated {num(h['calibrated'][metric])}")
    from franq.fit.calibrator_cv import format_cv

    lines += format_cv(report)
    if report.get("prior"):
        pr = report["prior"]
        lines.append(f"prior: maps moved from base rate {pr['fitted']:.4f} to {pr['deployment']:g} "
                     f"(logit shift {pr['logit_shift']:+.4f})")
    kc = report.get("knowledge_check")
    if kc:
        lines.append(f"knowledge check: UQ_unfaith ranks the claims its knowledge map is fitted on at AUROC "
                     f"{kc['auroc']:.3f} (90% interval {kc['low']:.3f}-{kc['high']:.3f}, {kc['answers']} answers, "
                     f"weight {kc['weight']:g}" + (f"; {report['n_synthetic']} claims labelled synthetic left out"
                                                   if report.get("n_synthetic") else "") + "): " + (
                         "no usable signal, so claims the passages do not support get 'uncertain'" if kc["low"] <= 0.5
                         else "it carries signal, so the knowledge term decides claims the passages do not support"))
    lines += [f"warning: {w}" for w in report["warnings"]]
    lines.append(f"wrote {output} ({report['file_bytes']} bytes) and {report_path}")
    return "\n".join(lines)
