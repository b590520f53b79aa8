"""Which language a question is written in, told apart well enough to answer honestly.

The embedded model reads English; a German or Russian question about a covered topic would
otherwise be told "the documents don't cover this", which is false. This is a small
function-word and script test, not a general language identifier: it names a language only
when the evidence is clear, and otherwise says nothing (the question is then answered).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_SCRIPTS = (
    ("ru", re.compile(r"[\u0400-\u04ff]")),
    ("ar", re.compile(r"[\u0600-\u06ff]")),
    ("el", re.compile(r"[\u0370-\u03ff]")),
    ("he", re.compile(r"[\u0590-\u05ff]")),
    ("zh", re.compile(r"[\u4e00-\u9fff]")),
    ("ja", re.compile(r"[\u3040-\u30ff]")),
    ("ko", re.compile(r"[\uac00-\ud7af]")),
)
_FUNCTION_WORDS = {
    "en": "the a an is are was do does did can could how what when where which who why you your i my we our "
    "of to in on for with and or it this that there have has will would should much many",
    "de": "der die das ist sind ein eine einen wie was wann wo welche welcher wer warum ich mein meine wir "
    "sie ihr ihre und oder für mit auf von zu im nicht kann können kostet gibt es ich habe viel",
    "fr": "le la les est sont un une des comment quel quelle quels quand où qui pourquoi je mon ma mes nous "
    "vous votre vos et ou pour avec sur de du au aux ce cette combien puis peut faut-il",
    "es": "el la los las es son un una unos cómo qué cuál cuándo dónde quién por porque yo mi mis nosotros "
    "usted su sus y o para con en de del al esta este cuánto cuánta puedo puede hay",
    "it": "il lo la gli le è sono un una come che quale quando dove chi perché io mio mia noi voi vostro "
    "e o per con su di del al questo questa quanto quanta posso può",
    "nl": "de het een is zijn hoe wat wanneer waar welke wie waarom ik mijn wij jullie u uw en of voor met "
    "op van te dit dat hoeveel kan kunnen",
    "pt": "o a os as é são um uma como que qual quando onde quem porque eu meu minha nós você seu sua e ou "
    "para com em de do da no na este esta quanto posso pode",
}
_VOCAB = {lang: frozenset(words.split()) for lang, words in _FUNCTION_WORDS.items()}
NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "ru": "Russian",
    "ar": "Arabic",
    "el": "Greek",
    "he": "Hebrew",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
}


def detect(text: str) -> str | None:
    """An ISO 639-1 code when the question is clearly in that language, else None."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    for code, script in _SCRIPTS:
        if sum(1 for c in letters if script.match(c)) / len(letters) > 0.5:
            return code
    words = [w.lower() for w in _WORD.findall(text)]
    if len(words) < 3:
        return None
    counts = {lang: sum(1 for w in words if w in vocab) for lang, vocab in _VOCAB.items()}
    best = max(counts, key=lambda lang: counts[lang])
    runner_up = max(v for lang, v in counts.items() if lang != best)
    # Clear evidence only: two function words at least, and more than any other language has.
    if counts[best] >= 2 and counts[best] > runner_up:
        return best
    return None
