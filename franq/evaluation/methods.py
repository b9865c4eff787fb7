"""Every method of the paper's tables, computed from :class:`~franq.evaluation.units.Units`.

Groups as in the paper (tables 2-3): general baselines (UQ of the output given the joint
prompt), RAG-specific baselines (each FRANQ component alone), XGBoost on two feature sets,
and the FRANQ calibration variants. Every method yields a score per unit, higher = more
likely true; probabilities (for ECE) are flagged. Supervised methods are fitted on the
train units and evaluated on the test units.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from calibration.franq import FranqCalibrator
from franq import registry
from franq.evaluation.units import Units
from franq.mix import mix
from franq.scorers.base import primary

GENERAL, RAG, XGB, FRANQ = "General baselines", "RAG-specific baselines", "XGBoost", "FRANQ"


@dataclass(frozen=True)
class Scores:
    name: str
    group: str
    test: np.ndarray | None  # None: not computed (see note)
    probabilities: bool
    note: str = ""


def _exp(x):
    return np.exp(np.clip(x, -745.0, 0.0))


def _probability(scorer_name: str) -> Callable[[Units], np.ndarray]:
    """A scorer's primary signal as the probability the pipeline mixes, by its declaration."""
    scorer = registry.lookup("scorers", scorer_name)
    name = primary(scorer).name
    return lambda u: np.clip(scorer().probability(u[name]), 0.0, 1.0)


def _signal(scorer_name: str) -> tuple[Callable[[Units], np.ndarray], bool]:
    """A scorer's primary signal as a ranking score (higher = more likely true), by its declaration."""
    sig = primary(registry.lookup("scorers", scorer_name))
    return (lambda u: sig.as_true_score(u[sig.name])), False


@dataclass(frozen=True)
class Setting:
    """What differs between long and short form: the baselines and FRANQ's scorers. FRANQ's
    inputs (UQ_faith, UQ_unfaith as probabilities, and the raw features) follow from the
    scorers' declared signals."""

    general: dict[str, tuple[Callable[[Units], np.ndarray], bool]]
    rag: dict[str, tuple[Callable[[Units], np.ndarray], bool]]
    faith_scorer: str
    unfaith_scorer: str
    all_features: tuple[str, ...]
    missing: dict[str, str]                      # method -> why it is not computed

    def uq_faith(self, u: Units) -> np.ndarray:
        return _probability(self.faith_scorer)(u)

    def uq_unfaith(self, u: Units) -> np.ndarray:
        return _probability(self.unfaith_scorer)(u)

    def franq_inputs(self, u: Units) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P_faithful, UQ_faith, UQ_unfaith) as probabilities: what the mix and a calibrator take."""
        return np.clip(u["p_faithful"], 0, 1), self.uq_faith(u), self.uq_unfaith(u)

    def franq_none(self, u: Units) -> np.ndarray:
        return mix(*self.franq_inputs(u))

    @property
    def franq_features(self) -> tuple[str, ...]:
        return ("p_faithful", *(primary(registry.lookup("scorers", n)).name
                                for n in (self.faith_scorer, self.unfaith_scorer)))


LONG = Setting(
    general={
        "Max Claim Prob.": (_probability("claim_prob"), True),
        "P(True)": (lambda u: u["p_true"], True),
        "Perplexity": (lambda u: u["log_claim_prob"] / np.maximum(u["n_tokens"], 1), False),
        "Max Token Entropy": (lambda u: -u["max_token_entropy"], False),
        "Mean Token Entropy": (lambda u: -u["mean_token_entropy"], False),
    },
    rag={
        "Faithfulness (P_faithful)": (lambda u: u["p_faithful"], True),
        "Parametric Knowledge": (_probability("parametric"), True),
    },
    faith_scorer="claim_prob",
    unfaith_scorer="parametric",
    all_features=("log_claim_prob", "p_true", "n_tokens", "max_token_entropy", "mean_token_entropy",
                  "p_faithful", "log_parametric"),
    missing={"CCP": "needs an NLI model for the token alternatives; none can be loaded offline"},
)

SHORT = Setting(
    general={
        "Max Sequence Prob.": (lambda u: _exp(u["log_seq_prob"]), True),
        "Perplexity": (lambda u: u["mean_logprob"], False),
        "Mean Token Entropy": (lambda u: -u["mean_token_entropy"], False),
        "P(True)": (lambda u: u["p_true"], True),
        "Lexical Similarity": _signal("lexical_similarity"),
        "Degree Matrix": _signal("degree_matrix"),
        "Sum of Eigenvalues": _signal("eigval"),
        "Eccentricity": _signal("eccentricity"),
        "Semantic Entropy": _signal("semantic_entropy"),
        "SentenceSAR": (lambda u: -u["u_sentence_sar"], False),
    },
    rag={
        "Faithfulness (P_faithful)": (lambda u: u["p_faithful"], True),
        "Parametric Knowledge": (lambda u: _exp(u["log_parametric"]), True),
    },
    faith_scorer="semantic_entropy",
    unfaith_scorer="eigval",
    all_features=("log_seq_prob", "mean_logprob", "mean_token_entropy", "p_true", "u_lexical_similarity",
                  "u_degree_matrix", "u_eigval", "u_eccentricity", "u_semantic_entropy", "u_sentence_sar",
                  "p_faithful", "log_parametric"),
    missing={"CCP": "needs an NLI model for the token alternatives; none can be loaded offline"},
)


def _xgboost(train: Units, test: Units, features: tuple[str, ...]) -> np.ndarray:
    from calibration.boosted import XGBoostCalibrator

    cal = XGBoostCalibrator(feature_names=list(features), n_estimators=100, max_depth=3, seed=0)
    cal.fit(np.column_stack([train[f] for f in features]), train.is_true)
    return cal.predict(np.column_stack([test[f] for f in features]))


def run_methods(setting: Setting, train: Units, test: Units) -> tuple[list[Scores], dict[str, dict]]:
    """All methods' test scores, and the FRANQ calibrators' fit reports."""
    out = [Scores(name, GENERAL, np.asarray(f(test), dtype=np.float64), prob)
           for name, (f, prob) in setting.general.items()]
    out += [Scores(name, GENERAL, None, False, why) for name, why in setting.missing.items()]
    out += [Scores(name, RAG, np.asarray(f(test), dtype=np.float64), prob) for name, (f, prob) in setting.rag.items()]
    n_true = int(train.is_true.sum())
    unfit = (None if 0 < n_true < len(train) else
             f"not fitted: the train split has {len(train)} units, {n_true} true (both classes are needed)")
    for label, feats in (("all UQ features", setting.all_features), ("FRANQ features", setting.franq_features)):
        name = f"XGBoost ({label})"
        if unfit:
            out.append(Scores(name, XGB, None, True, unfit))
            continue
        try:
            out.append(Scores(name, XGB, _xgboost(train, test, feats), True))
        except ImportError as exc:
            out.append(Scores(name, XGB, None, True, f"xgboost not installed ({exc})"))
    out.append(Scores("FRANQ no calibration", FRANQ, np.clip(setting.franq_none(test), 0, 1), True))
    reports = {}
    for variant, label in (("calibrated", "FRANQ calibrated"), ("condition", "FRANQ condition-calibrated"),
                           ("soft", "FRANQ soft-calibrated")):
        cal = FranqCalibrator(variant=variant)
        if unfit:
            out.append(Scores(label, FRANQ, None, True, unfit))
            continue
        try:
            cal.fit(*setting.franq_inputs(train), train.is_true, is_faithful=train.is_faithful)
        except ValueError as exc:
            out.append(Scores(label, FRANQ, None, True, f"not fitted: {exc}"))
            continue
        reports[variant] = {"counts": cal.counts_, "warnings": list(cal.warnings_), "train_ece": cal.train_ece_}
        out.append(Scores(label, FRANQ, cal.predict(*setting.franq_inputs(test)), True))
    return out, reports
