"""The prompts of answering with faithfulness and sufficient context (papers 000 and 003),
beside the code that sends them. Each family has its version; tests/test_answering.py pins them."""
from __future__ import annotations

# ==================================================================================
# Answering with faithfulness and sufficient context (issue 15; papers 000 and 003).
# Used by franq.apps.answering. Each family has its version; tests/test_answering.py pins them.
# ==================================================================================

# ---------------------------------------------------------------- sufficiency: 1-shot CoT autorater (003 C.1)
SUFFICIENCY_AUTORATER_VERSION = "sufficiency-autorater-v1"
_AUTORATER_CRITERIA = (
    "You are an expert LLM evaluator that excels at evaluating a QUESTION and REFERENCES. Consider the "
    "following criteria:\n\nSufficient Context: 1 IF the CONTEXT is sufficient to infer the answer to the "
    "question and 0 IF the CONTEXT cannot be used to infer the answer to the question\n\n"
    "Assume the queries have timestamp {timestamp}.\n\n"
    "First, output a list of step-by-step questions that would be used to arrive at a label for the criteria. "
    "Make sure to include questions about assumptions implicit in the QUESTION. Include questions about any "
    "mathematical calculations or arithmetic that would be required. Next, answer each of the questions. Make "
    "sure to work step by step through any required mathematical calculations or arithmetic. Finally, use these "
    "answers to evaluate the criteria.\n\n"
    "Output the ### EXPLANATION (Text). Then, use the EXPLANATION to output the ### EVALUATION (JSON)")
_RAILWAY_QUESTION = "In which year did the publisher of Roald Dahl's Guide to Railway Safety cease to exist?"
_RAILWAY_SUFFICIENT = (
    "Roald Dahl's Guide to Railway Safety was published in 1991 by the British Railways Board. The British "
    "Railways Board had asked Roald Dahl to write the text of the booklet, and Quentin Blake to illustrate it, "
    "to help young people enjoy using the railways safely. The British Railways Board (BRB) was a nationalised "
    "industry in the United Kingdom that operated from 1963 to 2001. Until 1997 it was responsible for most "
    "railway services in Great Britain, trading under the brand name British Railways and, from 1965, British "
    "Rail. It did not operate railways in Northern Ireland, where railways were the responsibility of the "
    "Government of Northern Ireland.")
SUFFICIENCY_AUTORATER_TEMPLATE = (
    _AUTORATER_CRITERIA + "\n\nEXAMPLE:\n\n### QUESTION\n" + _RAILWAY_QUESTION + "\n\n### References\n"
    + _RAILWAY_SUFFICIENT + "\n\n### EXPLANATION\nThe context mentions that Roald Dahl's Guide to Railway "
    "Safety was published by the British Railways Board. It also states that the British Railways Board "
    "operated from 1963 to 2001, meaning the year it ceased to exist was 2001. Therefore, the context does "
    "provide a precise answer to the question.\n\n### JSON\n```\n{{\"Sufficient Context\": 1}}\n```\n\n"
    "Remember the instructions: " + _AUTORATER_CRITERIA + "\n\n### QUESTION\n{question}\n\n### REFERENCES\n"
    "{context}\n")
"""Paper 003 appendix C.1, with its ``<TIMESTAMP>`` slot as ``{timestamp}``."""
SUFFICIENCY_JSON_KEY = "Sufficient Context"

# ---------------------------------------------------------------- sufficiency: label-probability (FLAMe, 003 C.2)
SUFFICIENCY_LABEL_VERSION = "sufficiency-label-v1"
SUFFICIENCY_LABEL_TEMPLATES = {
    "corrected": (
        "INSTRUCTIONS:\ntitle: Is the context sufficient to infer the answer to the question?\n"
        "description: In this task, you will be provided with documents and a question. Use one of the "
        "following labels under 'judgment':\n"
        "1. sufficient: The documents are sufficient to infer the answer to the question.\n"
        "2. insufficient: The documents are not sufficient to infer the answer to the question.\n"
        "output_fields: judgment\n\nCONTEXT:\ndocuments: {context}\nquestion: {question}\n\njudgment:"),
    "verbatim": (
        "INSTRUCTIONS:\ntitle: Is the context sufficient to infer the answer to the question?\n"
        "description: In this task, you will be provided with documents and a question. Use one of the "
        "following labels under 'judgment':\n"
        "1. sufficient: The documents are not sufficient to infer the answer to the question.\n"
        "2. insufficient: The documents are sufficient to infer the answer to the question.\n"
        "output_fields: judgment\n\nCONTEXT:\ndocuments: {context}\nquestion: {question}\n\njudgment:"),
}
"""003 appendix C.2. The published prompt defines the two labels the wrong way round
("1. sufficient: The documents are not sufficient..."); ``corrected`` (the default) swaps
the definitions back, ``verbatim`` keeps the published text."""
SUFFICIENCY_LABELS = (("sufficient", "Sufficient"), ("insufficient", "Insufficient"))

# ---------------------------------------------------------------- pre-answering prediction (000 section 4.2.2)
PRE_ANSWER_VERSION = "pre-answer-v1"
PRE_ANSWER_TEMPLATE = ("Passages:\n{context}\n\nQuestion: {question}\n\n"
                       "Do the passages contain the answer to the question? Answer yes or no.")
"""A yes/no question asked before answering (000 uses the NoMIRACL prompt of Thakur et
al. 2024, which it does not reprint; this is our wording of the same question)."""
PRE_ANSWER_LABELS = (("yes", "Yes", "YES"), ("no", "No", "NO"))

# ---------------------------------------------------------------- post-answering NLI (000 appendix A.1)
AWF_HYPOTHESIS_VERSION = "awf-hypothesis-v1"
AWF_HYPOTHESIS = 'The answer to the question "{question}" is: "{answer}"'


def sufficiency_autorater_messages(question: str, context: str, timestamp: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": SUFFICIENCY_AUTORATER_TEMPLATE.format(
        question=question, context=context, timestamp=timestamp)}]


def sufficiency_label_messages(question: str, context: str, prompt: str = "corrected") -> list[dict[str, str]]:
    return [{"role": "user", "content": SUFFICIENCY_LABEL_TEMPLATES[prompt].format(question=question, context=context)}]


def pre_answer_messages(question: str, context: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": PRE_ANSWER_TEMPLATE.format(question=question, context=context)}]


# ==================================================================================
# The papers' own prompts, verbatim, selectable with ``prompts="paper"`` (issue 27;
# ``[prompts] style = "paper"`` or an answer check's ``prompt`` setting). ``franq`` (default)
# keeps the prompts above. tests/test_paper_prompts.py pins each text to its source.
# ==================================================================================
PROMPT_STYLES = ("franq", "paper")
PAPER_VERSION = "papers-v1"

# ---------------------------------------------------------------- 000 section 4.2.2: Pre-Answering (NoMIRACL)
NOMIRACL_ANSWER, NOMIRACL_NO_ANSWER = "Yes, answer is present", "I don't know"
NOMIRACL_TEMPLATE = (
    "I will give you a question and several contexts containing information about the question. Read the "
    f"contexts carefully. If any of the contexts answers the question, respond as either \"{NOMIRACL_ANSWER}\" "
    f"or \"{NOMIRACL_NO_ANSWER}\".\n\nQUESTION:\n{{question}}\n\nCONTEXTS:\n{{contexts}}\n\nOUTPUT:\n")
"""Paper 000 4.2.2 uses "the prompt given in (Thakur et al., 2024)" without reprinting it; this
is NoMIRACL's vanilla template (project-miracl/nomiracl, ``VanillaTemplate``): passages
as ``[i] text`` separated by blank lines. P(yes) is read from the first tokens "Yes" vs "I"."""
NOMIRACL_LABELS = (("Yes", "yes"), ("I",))

# ---------------------------------------------------------------- 000 appendix A.3: prompt-based NLI
NLI_PROMPT_SYSTEM = ("You are an expert in Natural Language Inference. Given a premise and a hypothesis, determine "
                     "if the premise entails the hypothesis. Output 1 if entailed, and 0 if not entailed.")
NLI_PROMPT_USER = ("Determine if the premise entails the hypothesis. Output 1 for entailment and 0 for "
                   "non-entailment. Premise: {premise} Hypothesis: {hypothesis} Output:")
"""000 appendix A.3, verbatim (``<Premise>`` / ``<Hypothesis>`` as slots). The paper scores "the
log-probability of the answer "1""; :data:`NLI_PROMPT_LABELS` reads p("1") against p("0")."""
NLI_PROMPT_LABELS = (("1",), ("0",))

# ---------------------------------------------------------------- 000 appendix C: Intrinsic Abstention, Vanilla
DONT_KNOW = "__DONT_KNOW__"
INTRINSIC_SYSTEM = ("You are a helpful assistant that answers a question based on the context provided. Please be "
                    "as concise as possible, do not add any additional information, and do not refer to the "
                    "context in anyway. If the answer does not exist in the context, you should output the "
                    f"special string `{DONT_KNOW}`.")
INTRINSIC_USER = ("Read the following context carefully and answer the question below only if the answer is "
                  "supported by the context.\nQuestion:\n{question}\nContext:\n{passages}")
VANILLA_SYSTEM = ("You are a helpful assistant that answers a question based on the context provided. Please be "
                  "as concise as possible, do not add any additional information, and do not refer to the "
                  "context in anyway.")
VANILLA_USER = "Read the following context carefully and answer the question below.\nQuestion:\n{question}\nContext:\n{passages}"
"""000 appendix C. The txt flattens the Vanilla box onto one line; the Intrinsic Abstention
box shows its line breaks (used for both). Passages ("<Passage 1> <Passage 2> : : <Passage n>")
are joined with blank lines."""

# ---------------------------------------------------------------- 000 appendix E.3: P[True]
P_TRUE_000 = ("Your task is to judge the validity of an answer to a question. You will be given a question, "
              "passages related to the question, and an answer to the question. Is the answer correct or "
              "incorrect? Do not elaborate! Only response with the word 'correct' or 'incorrect'.\n\n"
              "### Question: {question}\n### Passages: {passages}\n### Answer: {answer}")
"""000 appendix E.3 ("Only response" sic). The txt shows the three ``###`` headers with the
question slot only; the passages and answer slots follow the headers the same way."""
P_TRUE_000_LABELS = (("correct", "Correct"), ("incorrect", "Incorrect"))

# ---------------------------------------------------------------- 003 appendix C.3: LLMEval (three-way judge)
LLMEVAL_003 = (
    "===Task===\n\nI need your help in evaluating an answer provided by an LLM against ground truth answers. Your "
    "task is to determine if the LLM's response matches the ground truth answers. Please analyze the provided "
    "data and make a decision.\n\n===Instructions===\n\n"
    "1. Carefully compare the \"Predicted Answer\" with the \"Ground Truth Answers\".\n"
    "2. Consider the substance of the answers – look for equivalent information or correct answers. Do not "
    "focus on exact wording unless the exact wording is crucial to the meaning.\n"
    "3. Your final decision should be based on whether the meaning and the vital facts of the \"Ground Truth "
    "Answers\" are present in the \"Predicted Answer.\"\n"
    "4. Categorize the answer as one of the following:\n"
    " - \"perfect\": The answer is completely correct and matches the ground truth.\n"
    " - \"acceptable\": The answer is partially correct or contains the main idea of the ground truth.\n"
    " - \"incorrect\": The answer is wrong or contradicts the ground truth.\n"
    " - \"missing\": The answer is \"I don't know\", \"invalid question\", or similar responses indicating lack "
    "of knowledge.\n\n===Input Data===\n\n- Question: {question}\n- Predicted Answer: {answer}\n"
    "- Ground Truth Answers: {gold}\n\n===Output Format===\n\nProvide your evaluation in the following format:"
    "\n\nExplanation: (How you made the decision)\n\nDecision: (One of \"perfect\", \"acceptable\", "
    "\"incorrect\", or \"missing\")\n\nPlease proceed with the evaluation.")
"""003 appendix C.3. The paper prints the input block filled with one example ("What 1876
battle featured the Other Magpie?"); the three slots replace it. Decisions map to the three
outcomes: perfect / acceptable -> correct, incorrect -> hallucinate, missing -> abstain."""
LLMEVAL_OUTCOMES = {"perfect": "correct", "acceptable": "correct", "incorrect": "hallucinate", "missing": "abstain"}

# ---------------------------------------------------------------- 003 appendix C.4: answer prompts
_C4_BLOCK = ("\n\nEXAMPLE:\n\n### Question\n{example_question}\n### References\n{example_references}\n### Answer\n"
             "{example_answer}\n### Question\n{question}\n### References\n{references}\n### Answer\n")
ANSWER_003 = {
    "cot": ("Write an accurate and concise answer for the given question using only the provided search results "
            "(some of which might be irrelevant). Start with an accurate, engaging, and concise explanation based "
            "only on the provided documents. Must end with \"The answer is:\". Use an unbiased and journalistic "
            "tone." + _C4_BLOCK),
    "ao": ("Write an accurate and concise answer for the given question using only the provided search results "
           "(some of which might be irrelevant). Do not say anything other than the answer itself." + _C4_BLOCK),
}
"""003 appendix C.4, Chain of Thought and Answer Only. Incomplete in the paper: the example
question, references and answer are not printed (``<example question>`` ...), so they are
slots the caller fills; the CoT answer is the text after "The answer is:" (:func:`answer_003`)."""


def nomiracl_messages(question: str, passages: list[str]) -> list[dict[str, str]]:
    contexts = "\n\n".join(f"[{i}] {p}" for i, p in enumerate(passages, 1))
    return [{"role": "user", "content": NOMIRACL_TEMPLATE.format(question=question, contexts=contexts)}]


def nli_prompt_messages(premise: str, hypothesis: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": NLI_PROMPT_SYSTEM},
            {"role": "user", "content": NLI_PROMPT_USER.format(premise=premise, hypothesis=hypothesis)}]


def intrinsic_messages(question: str, passages: list[str]) -> list[dict[str, str]]:
    return [{"role": "system", "content": INTRINSIC_SYSTEM},
            {"role": "user", "content": INTRINSIC_USER.format(question=question, passages="\n\n".join(passages))}]


def p_true_000_messages(question: str, passages: list[str], answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": P_TRUE_000.format(question=question, passages="\n\n".join(passages),
                                                          answer=answer)}]


def llmeval_messages(question: str, answer: str, gold: list[str]) -> list[dict[str, str]]:
    return [{"role": "user", "content": LLMEVAL_003.format(question=question, answer=answer, gold=", ".join(gold))}]


def parse_llmeval(reply: str) -> str | None:
    """The outcome (correct / abstain / hallucinate) of a C.3 reply's last ``Decision:``; None if none."""
    import re

    found = re.findall(r"Decision:\W*(perfect|acceptable|incorrect|missing)", reply, re.I)
    return LLMEVAL_OUTCOMES[found[-1].lower()] if found else None


def answer_003(kind: str, question: str, references: str, *, example: tuple[str, str, str]) -> str:
    """003's C.4 prompt ``kind`` (``cot`` or ``ao``) with the caller's one example
    (question, references, answer): the paper does not print its example."""
    if kind not in ANSWER_003:
        raise ValueError(f"003 answer prompt: expected one of {sorted(ANSWER_003)}, got {kind!r}")
    q, r, a = example
    return ANSWER_003[kind].format(example_question=q, example_references=r, example_answer=a,
                                   question=question, references=references)


def cot_final_answer(reply: str) -> str:
    """003 C.4: the text after the last "The answer is:" (the whole reply when absent)."""
    head, sep, tail = reply.rpartition("The answer is:")
    return tail.strip() if sep else reply.strip()
