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
