"""Vector scaling of the verifier's three-way output (Guo et al. 2017, "On calibration of
modern neural networks", section 4.2), on log-probabilities: ``softmax(a * log p + b)`` with
one scale and one bias per class, fitted by maximum likelihood on held-apart data after
training, so that P_contradicted is not confident on true claims of natural answers.

The fit reads each dev claim the way ``franq score`` does: every window of every passage
(the verifier's windows) combined by its aggregation rule (the unscaled model; with
``relevant``, the most relevant window's distribution); natural sets (ExpertQA, WiCE) hold
supported and not mentioned claims, synthetic sets all three labels. Each source counts
equally (weights 1/n).
The card records ``{"calibration": {"method": "vector_scaling", "scale", "bias", "fitted_on",
"nll_before", "nll_after"}}``; :class:`franq.verifier.Verifier` applies it to every window.
"""
from __future__ import annotations

import numpy as np


def fit_vector_scaling(logits: np.ndarray, labels: np.ndarray, weights: np.ndarray, *,
                       l2: float = 1e-3, iters: int = 500) -> tuple[np.ndarray, np.ndarray, float, float]:
    """``(scale, bias, nll_before, nll_after)`` for ``(n, 3)`` log-probabilities (or logits) and labels in 0..2
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


def calibrate(dev: dict[str, list[dict]], read: dict[str, np.ndarray]) -> dict:
    """The card's ``calibration`` entry, fitted on every dev source (each weighted equally)
    from its probabilities ``read`` by :func:`franq.fit.verifier.train.read_dev` (the
    written folder, loaded without scaling)."""
    logp, labels, weights, used = [], [], [], {}
    for name, probs in read.items():
        pairs = dev[name]
        logp.append(np.log(np.clip(probs, 1e-12, 1.0)))
        labels.append(np.array([p["label"] for p in pairs]))
        weights.append(np.full(len(pairs), 1.0 / len(pairs)))
        used[name] = len(pairs)
    a, b, before, after = fit_vector_scaling(np.concatenate(logp), np.concatenate(labels), np.concatenate(weights))
    return {"method": "vector_scaling", "scale": [round(float(v), 6) for v in a],
            "bias": [round(float(v), 6) for v in b], "fitted_on": used,
            "nll_before": round(before, 4), "nll_after": round(after, 4)}
