"""Is this text English? A cheap check, so that a result says when franq scored text its
English-only models cannot read (issue 46.6): the default stack (SmolLM2, the verifier,
MiniLM, the lexical backend) was trained and calibrated on English, and on other languages
its numbers mean little. The pipeline adds :func:`warning` to each result's ``warnings``
(the API, ``franq score``, batches and the service alike) unless ``[model] multilingual``
is set (``franq serve --multilingual``).

Two signals, both linear in the text, no model:

1. **Script**: the share of letters outside the Latin blocks (Unicode below U+0250). Over
   half, and the text is named by its most frequent script (CYRILLIC, CJK, ARABIC, ...).
2. **Stopwords**, for Latin-script text of :data:`MIN_WORDS` words or more: the share of
   words that are among the 40 commonest function words of English, and of each of French,
   German, Spanish, Italian, Portuguese and Dutch (words shared with English removed from
   theirs). The text is called that language when its share is at least
   :data:`MIN_SHARE` and more than twice the English share.

Short texts (fewer than :data:`MIN_LETTERS` letters) are not judged. Proper nouns,
code and numbers count for nothing either way; a mixed text is judged by its majority.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter

MIN_LETTERS = 20
MIN_WORDS = 8
MIN_SHARE = 0.15

ENGLISH = frozenset("""the of and to a in is it that for was on are as with his they at be this from have or by one
had not but what all were when we there can an your which their said if do will each about how up out them then
she many some so these would other into has more her two like him see time could no make than first been its who
now people""".split())
OTHERS = {
    "French": "le la les de des du un une et est en que qui dans pour pas sur au aux avec ce cette il elle sont "
              "par plus ne se son sa ses nous vous ils été était être mais ou où donc",
    "German": "der die das und ist nicht ein eine zu den von mit sich des auf für im dem auch es an als wie "
              "aus bei oder nach wird sind war hat noch nur über einen einem",
    "Spanish": "el la los las de del y en que un una es por con para se su sus al lo como más pero o fue son "
               "está este esta entre cuando muy sin sobre también",
    "Italian": "il lo la gli le di del della e è un una che per con non si sono da al alla come più ma anche "
               "nel nella questo questa tra era",
    "Portuguese": "o a os as de do da dos das e é um uma que em no na para com não se por mais como mas foi "
                  "são ao pela pelo este esta entre",
    "Dutch": "de het een en van ik te dat die is niet zijn op aan met als voor er maar om ook dan zo nog "
             "wat bij door naar heeft wordt",
}
STOPWORDS = {lang: frozenset(words.split()) - ENGLISH for lang, words in OTHERS.items()}
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return name.split(" ")[0] if name else "OTHER"


def guess(text: str) -> str | None:
    """The language or script ``text`` looks written in when it is not English (``"French"``,
    ``"CYRILLIC"``); None when it looks English or is too short to judge."""
    letters = [c for c in text if c.isalpha()]
    if len(letters) < MIN_LETTERS:
        return None
    foreign = [c for c in letters if ord(c) >= 0x250]
    if len(foreign) * 2 > len(letters):
        return Counter(map(_script, foreign)).most_common(1)[0][0]
    words = WORD.findall(text.lower())
    if len(words) < MIN_WORDS:
        return None
    english = sum(w in ENGLISH for w in words) / len(words)
    share, lang = max((sum(w in stop for w in words) / len(words), lang) for lang, stop in STOPWORDS.items())
    return lang if share >= MIN_SHARE and share > 2 * english else None


def warning(fields: dict[str, str]) -> str | None:
    """One warning naming each field (``question``, ``answer``, ``passages``) that does not
    look English, or None."""
    found = [f"'{name}' looks {lang if lang[0].isupper() and lang[1:].islower() else lang.lower() + ' script'}"
             for name, text in fields.items() if isinstance(text, str) and (lang := guess(text))]
    if not found:
        return None
    return (f"{', '.join(found)}, not English: franq's models are English-only, so these scores may mean little "
            f"(set [model] multilingual = true, or franq serve --multilingual, if yours read this language)")
