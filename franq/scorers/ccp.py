"""Claim-conditioned probability (CCP; Fadeeva et al. 2024, "Fact-checking the output of
large language models via token-level uncertainty quantification"): a general baseline
of the FRANQ paper's table 1.

For each token of the claim, the pass's ``k`` most likely tokens at that position
(``CaptureSpec(top_k=k)``, the with-passages pass) are its alternatives; the answer's own
token is the first. An NLI model compares the claim's text up to that token with the same
text where the token is replaced by each alternative, in both directions, and the two
argmax labels combine as LM-Polygraph's ``_combine_nli`` (equal: that label; entailment
against contradiction: neutral; else whichever of the two is present). Then::

    CCP_token = sum p(alternatives entailing) / sum p(alternatives entailing or contradicting)
    CCP(claim) = prod over the claim's tokens of CCP_token

(the answer's own token always counts as entailing; neutral alternatives count in neither
sum). This is LM-Polygraph's ``ClaimConditionedProbabilityClaim(nli_context="fact_pref")``
on teacher-forced tokens, except that no stopword rule is applied (LM-Polygraph treats a
token that is an NLTK stopword as CCP 1): a token's alternatives are always judged.

The NLI model is any three-way sequence-classification model: ``[scorers.ccp] model``,
else ``[equivalence.nli_argmax]`` / ``[equivalence.nli]`` / ``[faithfulness.nli] model``.
Higher = more likely true; the signal ``p_ccp`` is a probability.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import INTERNALS, PASSES
from franq.lm.capture import CaptureSpec
from franq.scorers.base import Signal
from franq.settings import Setting

TOP_K = 10
"""LM-Polygraph's ``n_alternatives``."""


def combine_nli(forward: str, backward: str) -> str:
    """Both directions' labels -> one (LM-Polygraph's rule)."""
    if forward == backward:
        return forward
    if {forward, backward} == {"entail", "contra"}:
        return "neutral"
    for x in ("entail", "contra"):
        if x in (forward, backward):
            return x
    return "neutral"


def token_log_ccp(logprobs: Sequence[float], labels: Sequence[str]) -> float:
    """log CCP of one token: ``logprobs[0]`` is the answer's token, ``labels[i]`` the combined
    NLI label of alternative i against it (``labels[0]`` is ignored: always entailing)."""
    entail = [logprobs[0]] + [lp for lp, lab in zip(logprobs[1:], labels[1:]) if lab == "entail"]
    contra = [lp for lp, lab in zip(logprobs[1:], labels[1:]) if lab == "contra"]
    return float(np.logaddexp.reduce(entail) - np.logaddexp.reduce(entail + contra))


def claim_ccp(token_logprobs: Sequence[Sequence[float]], token_labels: Sequence[Sequence[str]]) -> float:
    """CCP of a claim: the product of its tokens' CCP."""
    return float(np.exp(sum(token_log_ccp(lp, lab) for lp, lab in zip(token_logprobs, token_labels))))


class ClaimConditionedProbabilityScorer:
    name = "ccp"
    needs = frozenset({PASSES, INTERNALS})
    capture = CaptureSpec(attention=False, top_k=TOP_K)
    settings = (Setting("model", str, None, "a local three-way NLI model directory (unset: the equivalence "
                                            "or faithfulness NLI model)"),)
    signals = (Signal("p_ccp", "prob", True, "claim-conditioned probability: product over the claim's tokens of "
                                             "P(entailing alternatives) / P(entailing or contradicting ones)"),)

    def __init__(self, nli, tokenizer):
        """``nli``: a loaded NLI model with ``model``, ``tokenizer``, ``device`` (e.g.
        :class:`~franq.faithfulness.nli.NLIFaithfulness`); ``tokenizer`` decodes the LM's ids."""
        from franq.equivalence.nli import NLIArgmaxJudge

        self.judge = NLIArgmaxJudge(nli)
        labels = {int(i): str(v).lower() for i, v in nli.model.config.id2label.items()}
        self.labels = {i: "entail" if v.startswith("entail") else "contra" if v.startswith("contra") else "neutral"
                       for i, v in labels.items()}
        self.tokenizer = tokenizer

    @classmethod
    def from_config(cls, config, lm):
        from franq.errors import InputError
        from franq.faithfulness.nli import NLIFaithfulness

        model = config.settings_for("scorers", "ccp")["model"]
        for kind, name in (("equivalence", "nli_argmax"), ("equivalence", "nli"), ("faithfulness", "nli")):
            model = model or config.settings_for(kind, name)["model"]
        if not model:
            raise InputError("config 'scorers.ccp.model': CCP needs a three-way NLI model (or set "
                             "[equivalence.nli] / [faithfulness.nli] model)")
        return cls(NLIFaithfulness(model, device=config.model.device), lm.tokenizer)

    def _labels(self, pairs: list[tuple[str, str]]) -> list[str]:
        uniq = list(dict.fromkeys(pairs))
        probs = self.judge.probabilities(uniq)
        got = {p: self.labels[int(np.argmax(row))] for p, row in zip(uniq, probs)}
        return [got[p] for p in pairs]

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        out = []
        for e in batch:
            alts = getattr(e.internals, "alternatives", None)
            if alts is None:
                raise ValueError("ccp: the with-passages pass kept no token alternatives (CaptureSpec.top_k)")
            ids, lps = alts
            answer_ids = list(e.claim.token_ids) if e.claim.token_ids else None
            pos = list(e.claim.token_positions)
            own = answer_ids if answer_ids and len(answer_ids) == len(pos) else [int(ids[t, 0]) for t in pos]
            token_lps, token_labels = [], []
            for i, t in enumerate(pos):
                own_lp = e.rag_logprobs[t]
                prefix = own[:i]
                original = self.tokenizer.decode(prefix + [own[i]]).strip()
                others = [(int(a), float(lp)) for a, lp in zip(ids[t], lps[t]) if int(a) != own[i]][:len(ids[t]) - 1]
                texts = [self.tokenizer.decode(prefix + [a]).strip() for a, _ in others]
                pairs = [(original, x) for x in texts] + [(x, original) for x in texts]
                labels = self._labels(pairs) if pairs else []
                n = len(texts)
                combined = [combine_nli(labels[j], labels[n + j]) for j in range(n)]
                token_lps.append([own_lp] + [lp for _, lp in others])
                token_labels.append(["entail"] + combined)
            out.append(claim_ccp(token_lps, token_labels))
        return {"p_ccp": np.array(out, dtype=np.float64)}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.clip(np.asarray(primary, dtype=np.float64), 0.0, 1.0)
