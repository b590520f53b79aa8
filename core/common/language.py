"""Which language a question is written in, told apart well enough to answer honestly.

The embedded model reads English; a German or Russian question about a covered topic would
otherwise be told "the documents don't cover this", which is false. This is a small
function-word and script test, not a general language identifier: it names a language only
when the evidence is clear, and otherwise says nothing (the question is then answered).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_SCRIPTS = (
    ("cyrillic", re.compile(r"[\u0400-\u04ff]")),
    ("ar", re.compile(r"[\u0600-\u06ff]")),
    ("el", re.compile(r"[\u0370-\u03ff]")),
    ("he", re.compile(r"[\u0590-\u05ff]")),
    ("zh", re.compile(r"[\u4e00-\u9fff]")),
    ("ja", re.compile(r"[\u3040-\u30ff]")),
    ("ko", re.compile(r"[\uac00-\ud7af]")),
)
# The words a short question is made of: function words, question words, and the verbs and nouns customers and
# staff ask with (cost, price, pay, deliver, order, days off). English words that other languages share in
# spelling ("die", "was", "also", "a", "in") are left out of the others' lists, so English is never mistaken.
_FUNCTION_WORDS = {
    "en": "the a an is are was do does did can could how what when where which who why you your i my we our "
    "of to in on for with and or it this that there have has will would should much many me get any",
    "de": "der die das dem den des ist sind ein eine einen einem wie was wann wo welche welcher welches wer warum "
    "ich mein meine meinen mir mich wir uns sie ihr ihre euer eure euch und oder für mit auf von zu im zum zur "
    "nicht kein keine kann können muss müssen darf soll kostet kosten gibt es habe hat haben bekomme bekommt "
    "viel viele wieviel lange bis auch noch schon bei nach aus über liefert lieferung preis zahlen bezahlen "
    "urlaub tage frei gilt garantie bestellung rechnung wenn ob",
    "fr": "le la les est sont un une des comment quel quelle quels quelles quand où qui pourquoi je mon ma mes "
    "nous vous votre vos et ou pour avec sur du au aux ce cette ces combien puis peut peux faut-il faut "
    "est-ce que qu'est-ce c'est y a-t-il il elle coûte coute prix payer livraison livrez jours congé congés "
    "pas ne mais dans par chez commande facture garantie dure durée gratuit gratuite de",
    "es": "el la los las es son un una unos unas cómo como qué cuál cuáles cuándo dónde donde quién quienes por "
    "porque yo mi mis nosotros usted ustedes su sus y o para con en del al esta este estos cuánto cuánta "
    "cuantos cuantas cuánto cuántos cuántas puedo puede pueden hay tengo tiene tienen cuesta cuestan precio "
    "pagar envío entrega hacéis hacen días vacaciones pedido factura necesito garantía dura gratis también de "
    # as typed without accents, as most chat questions are
    "que cual cuales cuando quien cuanto dias envio garantia haceis tambien",
    "it": "il lo la gli le è sono un una uno come che quale quali quando dove chi perché io mio mia miei noi "
    "voi vostro vostra e o per con su di del della dei al alla questo questa quanto quanta quanti quante "
    "da posso può possono costa costano prezzo pagare consegna consegnate spedizione giorni ferie ordine fattura "
    "garanzia dura gratuita gratuito mi serve avete ho ha non anche",
    "nl": "de het een is zijn hoe wat wanneer waar welke wie waarom ik mijn wij we jullie uw en of voor met "
    "op van te dit dat deze hoeveel kan kunnen kost kosten prijs betalen bezorgen bezorging verzending "
    "zaterdag dagen vakantiedagen heb hebben krijg krijgen bestelling factuur nodig garantie lang gratis "
    "niet ook er bij naar",
    "pt": "o a os as é são um uma como que qual quais quando onde quem porque eu meu minha meus nós você vocês "
    "seu sua e ou para com em do da dos das no na nos nas este esta quanto quanta quantos quantas posso "
    "pode podem custa custam preço pagar entrega entregam frete dias férias pedido fatura preciso garantia "
    "dura grátis tenho tem têm não também",
    "pl": "ile jak jaki jaka jakie kiedy gdzie kto dlaczego czy co ja mój moja moje my wy wasz wasza wasze pan "
    "pani i lub albo dla z ze na w we do od po jest są to ten ta mogę może można kosztuje kosztują cena "
    "zapłacić płaci dostawa dostarczacie wysyłka dni urlopu urlop zamówienie faktury faktura gwarancja "
    "trwa mam macie nie też potrzebuję",
}
_CYRILLIC_WORDS = {
    "ru": "как что сколько где когда кто почему это для ли мне меня вы ваш ваша можно есть нет и или на в "
    "с по у стоит стоимость цена доставка оплатить отпуска заказ счёт счет гарантия какой какая бесплатная",
    "uk": "як що скільки де коли хто чому це для чи мені мене ви ваш ваша можна є немає і та або на в у "
    "з по коштує вартість ціна доставка оплатити відпустки замовлення рахунок гарантія який яка безкоштовна",
}
# Letters that, within the languages told apart here, one language alone writes.
_LETTERS = {
    "de": "äöüß",
    "fr": "œâêîïëûùÿ",
    "es": "ñ¿¡",
    "pt": "ãõ",
    "it": "ì",
    "pl": "ąćęłńśźż",
    "uk": "іїєґ",
    "ru": "ыэъё",
}
# Elided articles and pronouns: French "j'ai", "qu'il", "l'adresse"; Italian "dell'ufficio", "un'ora".
_ELISIONS = {
    "fr": re.compile(r"(?<![\w'’])(?:j|qu|n|c|s|d|m|t|l)['’](?=\w)", re.IGNORECASE),
    "it": re.compile(r"(?<![\w'’])(?:dell|all|nell|sull|dall|un|quest)['’](?=\w)", re.IGNORECASE),
}
_VOCAB = {lang: frozenset(words.split()) for lang, words in _FUNCTION_WORDS.items()}
_CYRILLIC_VOCAB = {lang: frozenset(words.split()) for lang, words in _CYRILLIC_WORDS.items()}
NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "pl": "Polish",
    "ru": "Russian",
    "uk": "Ukrainian",
    "ar": "Arabic",
    "el": "Greek",
    "he": "Hebrew",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
}


def detect(text: str, need: int = 2, lead: float = 1.0) -> str | None:
    """An ISO 639-1 code when the question is clearly in that language, else None.

    Clearly: a script most of its letters are written in, or at least `need` words of evidence and more than
    `lead` times what any other language has.
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    words = [w.lower() for w in _WORD.findall(text)]
    for code, script in _SCRIPTS:
        if sum(1 for c in letters if script.match(c)) / len(letters) > 0.5:
            if code != "cyrillic":
                return code
            # Russian unless the words or letters say Ukrainian (or the other way round).
            return _best(words, _CYRILLIC_VOCAB, {"ru", "uk"}, need=1) or "ru"
    elided = {lang: len(pattern.findall(text)) for lang, pattern in _ELISIONS.items()}
    return _best(words, _VOCAB, set(_VOCAB), need=need, lead=lead, extra=elided)


# Languages a chat question's few words can't reliably tell apart: unaccented Spanish ("a que hora abren
# sabados") reads as Portuguese. Where the documents are written in one of them, its neighbour is read as it.
CLOSE: dict[str, frozenset[str]] = {
    "es": frozenset({"pt", "it", "ca", "gl"}),
    "pt": frozenset({"es", "it", "gl"}),
    "it": frozenset({"es", "pt"}),
    "de": frozenset({"nl"}),
    "nl": frozenset({"de"}),
    "fr": frozenset({"ca"}),
    "ca": frozenset({"fr", "es"}),
}


def neighbour_in(language: str, readable: Sequence[str]) -> str | None:
    """The first of the `readable` languages that `language` can't be told from in a short question, if any."""
    return next((lang for lang in readable if language in CLOSE.get(lang, ())), None)


def detect_document(text: str) -> str | None:
    """A document's language, from its opening (its first 20,000 characters), or None when unclear.

    A document must give more evidence than a question: five words at least, twice as many as any other
    language has, so that a price list's "price per metre" is not Italian. A table is read by its header and
    cell words, each counted once: its rows repeat the header's names ("Price per day: 40; …" row after row)
    and its short cells, and a hundred rows that say "per" are no more Italian than one.
    """
    prose: list[str] = []
    table: dict[str, None] = {}  # the tables' distinct words, in order
    for line in text[:20_000].split("\n"):
        if _is_table_row(line):
            table.update(dict.fromkeys(word.lower() for word in _CELL_SPLIT.split(line) if word))
        else:
            prose.append(line)
    return detect("\n".join([*prose, " ".join(table)]), need=5, lead=2.0)


_CELL_SPLIT = re.compile(r"[\s:;]+")  # a table row's words, elisions ("dell'ufficio") kept whole


def _is_table_row(line: str) -> bool:
    """A table row as the readers write it (core/ingest/readers/tables.py): `Header: value; Header: value`,
    two cells at least named by their header (a header may hold a colon of its own: "Day hire, 8:00 am")."""
    return sum(": " in cell for cell in line.split("; ")) >= 2


def _counts(
    words: list[str], vocab: dict[str, frozenset[str]], languages: set[str], extra: dict[str, int]
) -> dict[str, float]:
    counts = dict.fromkeys(vocab, 0.0)
    for lang, n in extra.items():
        counts[lang] += n
    for word in words:
        for lang, known in vocab.items():
            if word in known:
                counts[lang] += 1
        for lang, own in _LETTERS.items():
            if lang in languages and any(c in own for c in word):
                counts[lang] += 1
    return counts


def _best(
    words: list[str],
    vocab: dict[str, frozenset[str]],
    languages: set[str],
    need: int,
    lead: float = 1.0,
    extra: dict[str, int] | None = None,
) -> str | None:
    """The language with the most evidence (its words, and words spelt with a letter only it writes), when
    that is at least `need` and more than `lead` times any other language's; never another language over
    English."""
    counts = _counts(words, vocab, languages, extra or {})
    best = max(counts, key=lambda lang: counts[lang])
    runner_up = max(v for lang, v in counts.items() if lang != best)
    if counts[best] >= need and counts[best] > lead * runner_up:
        return best
    return None
