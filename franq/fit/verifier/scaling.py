"""Vector scaling of the verifier's three-way output (Guo et al. 2017, "On calibration of
modern neural networks", section 4.2): ``softmax(a * logits + b)`` with one scale and one
bias per class, fitted by maximum likelihood on held-apart data after training, so that
P_contradicted is not confident on true claims of natural answers.

The fit reads each dev claim the way ``franq score`` does: every window of every passage,
the claim's distribution read from the window the rule of :mod:`franq.verifier.aggregate`
picks (with the unscaled model); natural sets (ExpertQA, WiCE) hold supported and not
mentioned claims, synthetic sets all three labels. Each source counts equally (weights 1/n).
The card records ``{"calibration": {"method": "vector_scaling", "scale", "bias", "fitted_on",
"nll_before", "nll_after"}}``; :class:`franq.verifier.Verifier` applies it to every window.
"""
from __future__ import annotations

import numpy as np


def fit_vector_scaling(logits: np.ndarray, labels: np.ndarray, weights: np.ndarray, *,
                       l2: float = 1e-3, iters: int = 500) -> tuple[np.ndarray, np.ndarray, float, float]:
    """``(scale, bias, nll_before, nll_after)`` for ``(n, 3)`` logits and labels in 0..2
    (weighted mean NLL; a small L2 pull of the scale towards 1 and the bias towards 0)."""
    import torch

    x = torch.tensor(logits, dtype=torch.float64)
    y = torch.tensor(labels, dtype=torch.long)
    w = torch.tensor(weights / weights.sum(), dtype=torch.float64)
    a = torch.ones(3, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(3, dtype=torch.float64, requires_grad=True)

    def nll(a_, b_):
        return -(w * torch.log_softmax(x * a_ + b_, -1).gather(1, y[:, None])[:, 0]).sum()

    with torch.no_grad():
        before = float(nll(a, b))
    opt = torch.optim.LBFGS([a, b], lr=0.5, max_iter=iters, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = nll(a, b) + l2 * (((a - 1) ** 2).sum() + (b ** 2).sum())
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        after = float(nll(a, b))
    return a.detach().numpy(), b.detach().numpy(), before, after


def claim_logits(model, tokenizer, pairs: list[dict], *, max_length: int, window_words: int,
                 device: str = "cpu", rule: str = "relevant") -> np.ndarray:
    """One ``(3,)`` logit row per dev pair: the window the aggregation rule picks (pairs with
    ``passages``: every window of every passage), else the pair's own premise."""
    import torch

    from franq.fit.verifier.data import sentences, windows
    from franq.verifier.aggregate import aggregate

    prem, claim, owner = [], [], []
    for k, p in enumerate(pairs):
        texts = p.get("passages") or [p["premise"]]
        for text in texts:
            sents = sentences(text) if "passages" in p else [text]
            for i, j in (windows(sents, window_words) if "passages" in p else [(0, 1)]):
                prem.append(" ".join(sents[i:j]))
                claim.append(p["claim"])
                owner.append(k)
    out = np.zeros((len(prem), 3))
    order = sorted(range(len(prem)), key=lambda i: len(prem[i]) + len(claim[i]))
    model.eval().to(device)
    with torch.inference_mode():
        for s in range(0, len(order), 128):
            idx = order[s:s + 128]
            enc = tokenizer([prem[i] for i in idx], [claim[i] for i in idx], padding=True,
                            truncation="longest_first", max_length=max_length, return_tensors="pt")
            out[idx] = model(**{k: v.to(device) for k, v in enc.items()}).logits.float().cpu().numpy()
    owner_a = np.array(owner)
    rows = np.zeros((len(pairs), 3))
    for k in range(len(pairs)):
        lg = out[owner_a == k]
        probs = np.exp(lg - lg.max(1, keepdims=True))
        probs /= probs.sum(1, keepdims=True)
        _, w = aggregate(probs, rule)
        rows[k] = lg[w if w is not None else 0]
    return rows


def calibrate(model, tokenizer, dev: dict[str, list[dict]], *, max_length: int, window_words: int,
              device: str = "cpu") -> dict:
    """Fit the card's ``calibration`` entry on every dev source (each weighted equally)."""
    logits, labels, weights, used = [], [], [], {}
    for name, pairs in dev.items():
        if not pairs:
            continue
        rows = claim_logits(model, tokenizer, pairs, max_length=max_length, window_words=window_words, device=device)
        logits.append(rows)
        labels.append(np.array([p["label"] for p in pairs]))
        weights.append(np.full(len(pairs), 1.0 / len(pairs)))
        used[name] = len(pairs)
    a, b, before, after = fit_vector_scaling(np.concatenate(logits), np.concatenate(labels), np.concatenate(weights))
    return {"method": "vector_scaling", "scale": [round(float(v), 6) for v in a],
            "bias": [round(float(v), 6) for v in b], "fitted_on": used,
            "nll_before": round(before, 4), "nll_after": round(after, 4)}
