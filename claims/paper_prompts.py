"""FRANQ's (paper 001) claim prompts, verbatim: decomposition (appendix B.2, Figure 5) and
span identification (Figure 6), both used with GPT-4o in the paper. Selected with
``prompt="paper"`` on :class:`claims.llm_decompose.LLMDecomposer` and
:class:`claims.llm_align.LLMWordAligner` (``[prompts] decompose`` / ``align`` in franq's
config); franq's own prompts stay the default. ``tests/test_paper_prompts.py`` pins both.
"""
from __future__ import annotations

PAPER_DECOMPOSE_VERSION = "atomic-paper-v1"
PAPER_DECOMPOSE = "\n\n".join([
    "Your task is to decompose the text into atomic claims.\nLet's define a function named decompose(input:str).\n"
    "The returned value should be a list of strings, where each string should be\na context-independent, fully "
    "atomic claim, representing one fact. Atomic\nclaims are simple, indivisible facts that do not bundle multiple "
    "pieces of\ninformation together.",
    "### Guidelines for Decomposition:",
    "1. Atomicity: Break down each statement into the smallest possible\nunit of factual information. Avoid "
    "grouping multiple facts in one claim.\nFor example:",
    "- Instead of: \"Photosynthesis in plants converts sunlight, carbon\ndioxide, and water into glucose and "
    "oxygen.\"",
    "- Output: [\"Photosynthesis in plants converts sunlight into glucose.\",\n\"Photosynthesis in plants "
    "converts carbon dioxide into glucose.\",\n\"Photosynthesis in plants converts water into glucose.\", "
    "\"Photosynthesis in\nplants produces oxygen.\"]",
    "- Instead of: \"The heart pumps blood through the body and regulates\noxygen supply to tissues.\"",
    "- Output: [\"The heart pumps blood through the body.\", \"The heart\nregulates oxygen supply to tissues.\"]",
    "- Instead of: \"Gravity causes objects to fall to the ground and keeps\nplanets in orbit around the sun.\"",
    "- Output: [\"Gravity causes objects to fall to the ground.\", \"Gravity\nkeeps planets in orbit around "
    "the sun.\"]",
    "2. Context-Independent: Each claim must be understandable and\nverifiable on its own without requiring "
    "additional context or references to\nother claims. Avoid vague claims like \"This process is important "
    "for life.\"",
    "3. Precise and Unambiguous: Ensure the claims are specific and\navoid combining related ideas that can "
    "stand independently.",
    "4. No Formatting: The response must be a Python list of strings\nwithout any extra formatting, code blocks, "
    "or labels like \"python\".",
    "### Example:",
    "If the input text is: \"Mary is a five-year-old girl. She likes playing piano\nand doesn't like cookies.\"",
    "The output should be: [\"Mary is a five-year-old girl.\", \"Mary likes playing\npiano.\", \"Mary "
    "doesn't like cookies.\"]",
    "Note that your response will be passed to the python interpreter, SO NO\nOTHER WORDS!",
    "decompose(\"{text}\")"])
"""FRANQ (001) appendix B.2, Figure 5, used with GPT-4o: one user turn, no system prompt and
no worked example turn. The txt prints the figure as separate blocks with the figure's line
wrapping; the blocks are joined by blank lines and the wrapping kept. Selected with
``prompt="paper"`` (``[prompts] decompose = "paper"``); the reply is a Python list of
strings, which :func:`parse_claim_list` reads."""
PAPER_ALIGN_VERSION = "words-paper-v1"
PAPER_ALIGN = "\n\n".join([
    "Task: Analyze the given text and the claim (which was extracted from the\ntext). For each sentence in the text:",
    "1. Copy the sentence exactly as it appears in the text.",
    "2. Identify the words from the sentence that are related to the claim, in the\nsame order they appear in the "
    "sentence. If no words are related, output\n\"No related words.\"",
    "Example:",
    "Text: \"Sure! Here are brief explanations of each type of network topology\nmentioned in the passages: [...]\"",
    "Claim: \"Distributed Bus topology connects all network nodes to a shared\ntransmission medium via multiple "
    "endpoints.\"",
    "Answer:",
    "Sentence: \"Sure! Here are brief explanations [...]\"",
    "Related words from this sentence (same order they appear in the sentence):\nNo related words",
    "Sentence: \"2. Distributed Bus: In a Distributed Bus topology, [...]\"",
    "Related words from this sentence (same order they appear in the sentence):\n\"Distributed\", \"Bus\", "
    "\"topology\", \"all\", \"network\", [...]",
    "Sentence: [... More sentences follow ...]",
    "Now analyze the following text using this format:",
    "Text: {text}",
    "Claim: {claim}",
    "Answer:"])
"""Figure 6. INCOMPLETE in the paper: "Parts of the 1-shot example have been omitted for
brevity" (the ``[...]`` are the paper's; its full example is not published), so this is the
printed text with the omissions left as printed. Blocks joined by blank lines, the figure's
wrapping kept. The reply lists, per sentence, ``Sentence: "..."`` then the related words as
quoted strings; :func:`claims.llm_align.paper_sentence_words` reads the block of the claim's
sentence."""
