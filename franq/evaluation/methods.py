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

from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from franq import registry
from franq.evaluation.units import Units
from franq.mix import mix
from franq.scorers.base import primary, probability_of

GENERAL, RAG, XGB, FRANQ = "General baselines", "RAG-specific baselines", "XGBoost", "FRANQ"
CCP_MISSING = ("needs the pass's top-k token alternatives and a three-way NLI model (the `ccp` scorer); the "
               "committed generations keep no alternatives and no NLI weights can be loaded offline here")
THRESHOLD = 0.5
"""The thresholded FRANQ variants' cut on P_faithful (paper table 13)."""
_MODEL = ("model", "3B-8B instruction models (Llama, Falcon, Gemma)", "SmolLM2-135M-Instruct Q4_1 (embedded), "
          "float32 on CPU", "the one model that runs offline on the benchmark's 2 CPU cores")
_CCP = ("CCP row", "computed", "–", "the committed generations keep no top-k alternatives and no three-way NLI "
        "weights load offline; the `ccp` scorer computes it given them (`[scorers.ccp] model`)")


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
    return lambda u: np.clip(probability_of(scorer, u[name]), 0.0, 1.0)


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
    described: str = ""
    """The settings that produced the numbers, where they differ from the paper (shown beside the table)."""
    paper_scale: Callable[[Units], tuple[np.ndarray, np.ndarray]] | None = None
    """UQ_faith, UQ_unfaith on the paper's raw scales, where they differ from the scorers' (a row of its own)."""
    differences: tuple[tuple[str, str, str, str], ...] = ()
    """(what, the paper, here, why it stays): the table printed under the numbers."""

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
    missing={"CCP": CCP_MISSING},
    described=("ExpertQA answers written by GPT-4 / Bing, **teacher-forced** through the embedded model (observer "
               "mode, not the paper's in-policy generations); the human claims given to franq (not decomposed); "
               "labels: ExpertQA's human judgements (true / false, Unsure left out); condition split by gold "
               "faithfulness (support = Complete); P_faithful from `combined-v1`, not AlignScore"),
    differences=(
        _MODEL,
        ("answers", "generated by the model (in-policy)", "ExpertQA's GPT-4 / Bing answers, teacher-forced "
         "(observer)", "the public claim-level truth labels belong to those answers; new answers need new labels"),
        ("claims", "decomposed from the answer", "ExpertQA's human claims, given to franq",
         "the labels are attached to those claims"),
        ("truth labels", "annotated for the paper", "ExpertQA's human judgements; Unsure left out",
         "the public labels"),
        ("P_faithful", "AlignScore", "`combined-v1`", "AlignScore's RoBERTa-large checkpoint is not loadable "
         "offline here; `faithfulness.name = \"alignscore\"` runs it given the weights"),
        _CCP,
    ),
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
        "Semantic Entropy": (lambda u: -u["u_semantic_entropy"], False),  # the paper's raw value
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
    missing={"CCP": CCP_MISSING},
    described=("nq-open questions with the gold passage + 4 **BM25** distractors (corrupted: the gold passage "
               "replaced by the next BM25 passage for half the questions), not Contriever top-5; the embedded "
               "model answers greedily (in-policy); correct = a gold answer occurs in the normalized answer "
               "(**gold match**, not GPT-4o judging); condition split by P_faithful > 0.5; samples judged "
               "equivalent by the normalized-answer judge (the paper: DeBERTa-MNLI argmax, `nli_argmax`); "
               "UQ_faith = p_semantic_entropy (length-normalized class masses, one over the effective number of "
               "meanings; the paper's raw SE is the Semantic Entropy row)"),
    paper_scale=lambda u: (_exp(-u["u_semantic_entropy"]), 1.0 / np.maximum(u["u_eigval"], 1.0)),
    differences=(
        _MODEL,
        ("passages", "Contriever top-5", "the gold passage + 4 BM25 distractors (nq-open-oracle)",
         "no Contriever index offline; the gold passage makes the faithful condition known"),
        ("corrupted retrieval", "appendix A.1", "the gold passage replaced by the next BM25 passage for half "
         "the questions", "as above: BM25 is the retriever at hand"),
        ("correct answer", "GPT-4o judges the answer against the gold", "a gold answer occurs in the normalized "
         "answer (gold match)", "no judge model offline; gold match is exact for one-fact answers"),
        ("sample equivalence", "DeBERTa-MNLI, argmax entailment", "the normalized-answer judge",
         "no NLI weights offline; `uq.equivalence = \"nli_argmax\"` is the paper's judge (equal to "
         "LM-Polygraph's) given them"),
        ("UQ_faith scale", "exp(-semantic entropy)", "exp(-SE) of length-normalized class masses "
         "(`p_semantic_entropy`)", "the paper's exp(-SE) is ~0 for 16-token samples, so its raw mix falls as "
         "P_faithful rises; its row is kept (\"paper's raw scales\"), and the Semantic Entropy row reads raw SE"),
        _CCP,
    ),
)


def _xgboost(train: Units, test: Units, features: tuple[str, ...]) -> np.ndarray:
    from calibration.boosted import XGBoostCalibrator

    cal = XGBoostCalibrator(feature_names=list(features), n_estimators=100, max_depth=3, seed=0)
    cal.fit(_features(train, features), train.is_true)
    return cal.predict(_features(test, features))


def _features(units: Units, names: tuple[str, ...]) -> ClaimInputs:
    """The units' columns ``names`` (``p_faithful`` among them: a unit's signal) as the signals
    an XGBoost calibrator reads; it reads nothing else."""
    return ClaimInputs(np.zeros(len(units)), np.zeros(len(units)), np.zeros(len(units)),
                       signals={f: units[f] for f in names})


def run_methods(setting: Setting, train: Units, test: Units) -> tuple[list[Scores], dict[str, dict]]:
    """All methods' test scores, and the FRANQ calibrators' fit reports."""
    out = [Scores(name, GENERAL, np.asarray(f(test), dtype=np.float64), prob)
           for name, (f, prob) in setting.general.items()]
    for name, why in setting.missing.items():
        if name == "CCP" and "p_ccp" in test.signals:  # scored with the `ccp` scorer
            out.append(Scores(name, GENERAL, np.clip(test["p_ccp"], 0, 1), True))
        else:
            out.append(Scores(name, GENERAL, None, False, why))
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
    if setting.paper_scale is not None:
        a, b = setting.paper_scale(test)
        out.append(Scores("FRANQ no calibration, paper's raw scales", FRANQ,
                          np.clip(mix(np.clip(test["p_faithful"], 0, 1), a, b), 0, 1), True,
                          "exp(-semantic entropy) and 1 / sum of eigenvalues mixed as they are: the first is ~0 for "
                          "16-token samples, so this mix falls as P_faithful rises"))
    p_f, a, b = setting.franq_inputs(test)  # the thresholded mix needs no fit: one raw branch per unit
    out.append(Scores(f"FRANQ no calibration T={THRESHOLD:g}", FRANQ,
                      np.clip(mix((p_f > THRESHOLD).astype(np.float64), a, b), 0, 1), True))
    reports = {}
    for variant, label, cut in (("calibrated", "FRANQ calibrated", None),
                                ("condition", "FRANQ condition-calibrated", None),
                                ("soft", "FRANQ soft-calibrated", None),
                                ("calibrated", f"FRANQ calibrated T={THRESHOLD:g}", THRESHOLD),
                                ("condition", f"FRANQ condition-calibrated T={THRESHOLD:g}", THRESHOLD)):
        cal = FranqCalibrator(variant=variant, hard_mix_threshold=cut)
        if unfit:
            out.append(Scores(label, FRANQ, None, True, unfit))
            continue
        try:
            cal.fit(ClaimInputs(*setting.franq_inputs(train)), train.is_true, is_faithful=train.is_faithful)
        except ValueError as exc:
            out.append(Scores(label, FRANQ, None, True, f"not fitted: {exc}"))
            continue
        reports[cal.name] = {"counts": cal.counts_, "warnings": list(cal.warnings_), "train_ece": cal.train_ece_}
        out.append(Scores(label, FRANQ, cal.predict(ClaimInputs(*setting.franq_inputs(test))), True))
    return out, reports
