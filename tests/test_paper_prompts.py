"""The papers' prompts, verbatim and selectable by name. Each expected text
is pinned here with its source (a test that read /work/shared/papers would not be portable):
001 = FRANQ (Fadeeva et al.), 000 = "Generate but Verify" (answering with faithfulness),
003 = "Sufficient Context" (Joren et al.)."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from claims.chat import ChatReply
from claims.llm_align import LLMWordAligner, paper_sentence_words
from claims.llm_decompose import LLMDecomposer, build_messages
from claims.paper_prompts import PAPER_ALIGN, PAPER_DECOMPOSE
from conftest import make_franq
from franq.apps.answering import prompts as AP
from franq.apps.answering.items import QAItem
from franq.apps.answering.verify import PreAnswerCheck, SelfPTrueCheck
from franq.config import FranqConfig
from franq.errors import InputError
from franq.lm import prompts as LP
from franq.types import Passage

PASSAGES = (Passage("The tower was finished in 1889.", "Eiffel Tower"), Passage("Paris is in France.", "Paris"))


class _Tok:  # a tokenizer without a chat template: prompts render as plain text
    chat_template = None


# ---------------------------------------------------------------- FRANQ (001) figures 3-6
def test_franq_fig3_short_answer_prompt_verbatim():
    # 001 appendix B.1, Figure 3
    text = LP.paper_answer_text("Who?", PASSAGES, short=True)
    assert text == ("Contents (not necessarily includes answer to the following question):\n"
                    "Title: Eiffel Tower\nContent: The tower was finished in 1889.\n"
                    "Title: Paris\nContent: Paris is in France.\n"
                    "Question: Who?\nAnswer (single line):")
    assert LP.paper_answer_text("Who?", None, short=True) == "Question: Who?\nAnswer (single line):"


def test_franq_fig4_balanced_long_answer_prompt_verbatim():
    # 001 appendix B.2, Figure 4 (the "balanced" prompt)
    text = LP.paper_answer_text("Why?", PASSAGES, short=False)
    assert text == ("Using the context provided below, answer the question with a balanced\n"
                    "approach. Ensure your response contains an equal number of claims or\n"
                    "details drawn directly from the context and from your own knowledge:\n"
                    "Context: passage 1:The tower was finished in 1889.\npassage 2:Paris is in France.\n"
                    "Question: Why?\nAnswer:")
    assert LP.answer_prompt_text(_Tok(), "Why?", PASSAGES, style="paper") == text + " "
    assert LP.answer_prompt_text(_Tok(), "Why?", PASSAGES).startswith(LP.SYSTEM_PROMPT)  # franq: unchanged


def test_franq_fig5_decomposition_prompt_verbatim():
    # 001 appendix B.2, Figure 5 (blocks as printed, joined by blank lines)
    assert PAPER_DECOMPOSE.startswith("Your task is to decompose the text into atomic claims.\n"
                                      "Let's define a function named decompose(input:str).\n")
    for piece in ("### Guidelines for Decomposition:",
                  '- Output: ["The heart pumps blood through the body.", "The heart\nregulates oxygen supply to tissues."]',
                  "4. No Formatting: The response must be a Python list of strings\nwithout any extra formatting, "
                  'code blocks, or labels like "python".',
                  'The output should be: ["Mary is a five-year-old girl.", "Mary likes playing\npiano.", '
                  '"Mary doesn\'t like cookies."]',
                  "Note that your response will be passed to the python interpreter, SO NO\nOTHER WORDS!"):
        assert piece in PAPER_DECOMPOSE
    assert PAPER_DECOMPOSE.endswith('\n\ndecompose("{text}")')
    assert build_messages(" Ann is tall. ", "paper") == [
        {"role": "user", "content": PAPER_DECOMPOSE.replace("{text}", "Ann is tall.")}]


def test_franq_fig6_span_prompt_verbatim_and_its_reply_is_read():
    # 001 appendix B.2, Figure 6 (the paper omits parts of its 1-shot example: "[...]")
    assert PAPER_ALIGN.startswith("Task: Analyze the given text and the claim (which was extracted from the\ntext). "
                                  "For each sentence in the text:\n\n1. Copy the sentence exactly as it appears in the text.")
    assert PAPER_ALIGN.endswith("Now analyze the following text using this format:\n\nText: {text}\n\n"
                                "Claim: {claim}\n\nAnswer:")
    reply = ('Sentence: "Ann is tall."\nRelated words from this sentence (same order they appear in the sentence):\n'
             'No related words\nSentence: "Bob lives in Rome and works in Milan."\n'
             'Related words from this sentence (same order they appear in the sentence):\n"Bob", "works", "Milan"')
    assert paper_sentence_words(reply, "Bob lives in Rome and works in Milan.") == ["Bob", "works", "Milan"]
    assert paper_sentence_words(reply, "Ann is tall.") == []


class _Chat:
    name = "fake"

    def __init__(self, reply):
        self.reply, self.messages = reply, []

    def complete(self, messages, *, max_tokens):
        self.messages.append(messages)
        return ChatReply(self.reply, prompt_tokens=1, completion_tokens=1, calls=1)


def test_llm_decomposer_and_aligner_send_the_paper_prompts_by_name():
    answer = "Bob lives in Rome and works in Milan."
    chat = _Chat('["Bob lives in Rome.", "Bob works in Milan."]')
    claims = LLMDecomposer(chat, prompt="paper").decompose(answer)
    assert [c.text for c in claims] == ["Bob lives in Rome.", "Bob works in Milan."]
    assert chat.messages[0][0]["content"].startswith("Your task is to decompose")
    align = _Chat('Sentence: "Bob lives in Rome and works in Milan."\nRelated words from this sentence (same '
                  'order they appear in the sentence):\n"Bob", "works", "Milan"')
    refined = LLMDecomposer(_Chat('["Bob works in Milan."]'), prompt="paper",
                            aligner=LLMWordAligner(align, prompt="paper")).decompose(answer)
    assert align.messages[0][0]["content"] == PAPER_ALIGN.format(text=answer, claim="Bob works in Milan.")
    # the listed words of the claim's sentence (merge_word_spans joins "works" and "Milan" across "in")
    assert [answer[s:e] for s, e in refined[0].char_spans] == ["Bob", "works in Milan"]
    with pytest.raises(ValueError, match="prompt"):
        LLMDecomposer(chat, prompt="nope")


def test_config_and_cli_select_the_paper_answer_prompt(tiny_lm_path):
    from franq.cli.options import StackFlags
    from franq.lm import CausalLM

    cfg = FranqConfig.from_dict({"prompts": {"style": "paper"}})
    assert cfg.prompts.of("answer") == cfg.prompts.of("decompose") == "paper"
    assert FranqConfig.from_dict({"prompts": {"style": "paper", "answer": "franq"}}).prompts.of("answer") == "franq"
    assert StackFlags(prompts="paper").config().prompts.style == "paper"
    with pytest.raises(InputError, match="prompts.style"):
        FranqConfig.from_dict({"prompts": {"style": "gpt"}})
    lm = CausalLM.load(str(tiny_lm_path))
    franq = make_franq(lm, {"prompts": {"answer": "paper"}})
    assert franq.prompt_style == "paper" and franq.preset("long").evidence.style == "paper"
    assert "answer the question with a balanced" in lm.rag_prompt("Why?", list(PASSAGES), style=franq.prompt_style).text
    assert franq.preset("long").stack["prompt_version"] == LP.PAPER_PROMPT_VERSION
    # the pipeline holds the style: the shared model carries none, and another pipeline on it keeps its own
    assert not hasattr(lm, "prompt_style") and "balanced" not in lm.rag_prompt("Why?", list(PASSAGES)).text
    assert make_franq(lm).preset("long").evidence.style == "franq"


def test_score_cli_takes_prompts_flag():
    from franq.cli import main

    out = CliRunner().invoke(main, ["score", "--help"])
    assert "--prompts [franq|paper]" in out.output


# ---------------------------------------------------------------- 000 and 003
def test_000_nomiracl_a3_intrinsic_and_e3_prompts_verbatim():
    # 000 4.2.2 cites NoMIRACL (Thakur et al. 2024); its vanilla template (project-miracl/nomiracl)
    assert AP.nomiracl_messages("Q?", ["a", "b"])[0]["content"] == (
        "I will give you a question and several contexts containing information about the question. Read the "
        "contexts carefully. If any of the contexts answers the question, respond as either \"Yes, answer is "
        "present\" or \"I don't know\".\n\nQUESTION:\nQ?\n\nCONTEXTS:\n[1] a\n\n[2] b\n\nOUTPUT:\n")
    # 000 appendix A.3
    assert AP.nli_prompt_messages("P.", "H.") == [
        {"role": "system", "content": "You are an expert in Natural Language Inference. Given a premise and a "
         "hypothesis, determine if the premise entails the hypothesis. Output 1 if entailed, and 0 if not entailed."},
        {"role": "user", "content": "Determine if the premise entails the hypothesis. Output 1 for entailment and 0 "
         "for non-entailment. Premise: P. Hypothesis: H. Output:"}]
    # 000 appendix C, Intrinsic Abstention
    sys_, user = AP.intrinsic_messages("Q?", ["a", "b"])
    assert sys_["content"].endswith("If the answer does not exist in the context, you should output the special "
                                    "string `__DONT_KNOW__`.")
    assert user["content"] == ("Read the following context carefully and answer the question below only if the "
                               "answer is supported by the context.\nQuestion:\nQ?\nContext:\na\n\nb")
    # 000 appendix E.3, P[True]
    assert AP.p_true_000_messages("Q?", ["a"], "A")[0]["content"] == (
        "Your task is to judge the validity of an answer to a question. You will be given a question, passages "
        "related to the question, and an answer to the question. Is the answer correct or incorrect? Do not "
        "elaborate! Only response with the word 'correct' or 'incorrect'.\n\n### Question: Q?\n### Passages: a\n"
        "### Answer: A")


def test_003_llmeval_three_way_judge_and_c4_answer_prompts():
    # 003 appendix C.3
    text = AP.llmeval_messages("Q?", "A", ["g1", "g2"])[0]["content"]
    assert text.startswith("===Task===\n\nI need your help in evaluating an answer provided by an LLM against "
                           "ground truth answers.")
    assert "- Question: Q?\n- Predicted Answer: A\n- Ground Truth Answers: g1, g2\n\n===Output Format===" in text
    assert text.endswith('Decision: (One of "perfect", "acceptable", "incorrect", or "missing")\n\n'
                         "Please proceed with the evaluation.")
    assert AP.parse_llmeval("Explanation: same.\n\nDecision: acceptable") == "correct"
    assert AP.parse_llmeval("Decision: \"missing\"") == "abstain"
    assert AP.parse_llmeval("Decision: incorrect") == "hallucinate" and AP.parse_llmeval("no idea") is None
    # 003 appendix C.4 (its example is not printed: the caller gives one)
    cot = AP.answer_003("cot", "Q?", "R", example=("EQ", "ER", "EA"))
    assert cot.startswith("Write an accurate and concise answer for the given question using only the provided "
                          "search results (some of which might be irrelevant). Start with an accurate, engaging, "
                          "and concise explanation based only on the provided documents. Must end with \"The "
                          "answer is:\". Use an unbiased and journalistic tone.\n\nEXAMPLE:\n\n### Question\nEQ\n")
    assert cot.endswith("### Question\nQ?\n### References\nR\n### Answer\n")
    assert "Do not say anything other than the answer itself." in AP.answer_003("ao", "Q", "R", example=("", "", ""))
    assert AP.cot_final_answer("Because X. The answer is: 1889") == "1889"


class _Labeler:
    name = "fake"

    def __init__(self):
        self.calls = []

    def probability(self, messages_list, labels):
        self.calls.append((messages_list, labels))
        return np.full(len(messages_list), 0.7)


def test_checks_send_the_paper_prompts_by_name():
    item = QAItem("Q?", PASSAGES, answer="1889")
    lab = _Labeler()
    PreAnswerCheck(lab, prompt="paper").predict([item])
    assert lab.calls[-1][0][0][0]["content"].startswith("I will give you a question and several contexts")
    assert lab.calls[-1][1] == AP.NOMIRACL_LABELS
    SelfPTrueCheck(lab, prompt="paper").predict([item])
    assert lab.calls[-1][0][0][0]["content"].startswith("Your task is to judge the validity")
    assert lab.calls[-1][1] == AP.P_TRUE_000_LABELS
    PreAnswerCheck(lab).predict([item])
    assert lab.calls[-1][0][0][0]["content"].startswith("Passages:")  # franq's, the default
    with pytest.raises(InputError, match="prompt"):
        PreAnswerCheck(lab, prompt="x")


def test_registered_checks_read_the_config_style(make_franq, tiny_lm):
    from franq.apps.answering.decide import build_check

    franq = make_franq(tiny_lm, {"prompts": {"style": "paper", "answer": "franq"}})
    assert build_check("pre_answer", franq, "short").prompt == "paper"
    assert build_check("self_p_true", make_franq(tiny_lm), "short").prompt == "franq"
