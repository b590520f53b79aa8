"""Questions in a language the model can't read get an honest answer, never "not covered"."""

import json
from pathlib import Path

import pytest

from core import SCOPES
from core.common.language import detect
from core.common.settings import from_env


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("How much is a solid oak worktop?", "en"),
        ("Wie viel kostet eine Küchenfront aus massiver Eiche pro Quadratmeter?", "de"),
        ("Combien de temps dure la garantie sur une cuisine ?", "fr"),
        ("¿Cuánto cuesta la entrega a 30 km?", "es"),
        ("Сколько стоит доставка?", "ru"),
        ("كم تكلفة التوصيل؟", "ar"),
        ("price for birch ply fronts", None),  # too few function words to say: answered as asked
    ],
)
def test_the_language_is_named_only_on_clear_evidence(question, language):
    assert detect(question) == language


@pytest.mark.parametrize("question", ["Wie lange ist die Garantie auf Scharniere?", "Сколько стоит доставка?"])
def test_a_question_in_another_language_is_answered_honestly_not_refused_as_uncovered(pipeline, question):
    answer = pipeline.answer(question, SCOPES["public"])
    assert (answer.kind, answer.reason) == ("refused", "language")
    assert answer.languages == ("en",) and answer.language in ("de", "ru")
    assert answer.retrieved == (), "no search is made in a language the model can't read"


# Short questions as customers and staff type them, a few per language (and none of them English).
SHORT = {
    "de": [
        "Wie viel kostet die Lieferung?",
        "Liefert ihr auch am Samstag?",
        "Preis für Montage?",
        "Darf ich im Homeoffice arbeiten?",
    ],
    "fr": [
        "Combien coûte un plan de travail en chêne ?",
        "prix de la pose ?",
        "J'ai oublié mon mot de passe",
        "Livrez-vous le samedi ?",
    ],
    "es": [
        "¿Cuánto dura la garantía?",
        "cuantos dias de vacaciones tengo",
        "necesito una factura",
        "¿Puedo pagar con tarjeta?",
    ],
    "it": ["Quanto costa la consegna?", "quanti giorni di ferie ho", "Mi serve una fattura", "Chi paga il reso?"],
    "nl": [
        "Hoeveel kost de bezorging?",
        "Kan ik met pin betalen?",
        "Wat is de opzegtermijn?",
        "Wie betaalt het retourneren?",
    ],
    "pt": ["Quanto custa a entrega?", "Posso pagar com cartão?", "O frete é grátis?", "Esqueci a minha senha"],
    "pl": ["Ile kosztuje dostawa?", "Czy mogę zapłacić kartą?", "cena montażu?", "Kiedy dostanę wypłatę?"],
    "ru": ["Сколько стоит доставка?", "Можно оплатить картой?", "Мне нужен счёт", "Когда я получу зарплату?"],
    "uk": ["Скільки коштує доставка?", "Чи можна оплатити карткою?", "ціна монтажу?", "Коли я отримаю зарплату?"],
}


@pytest.mark.parametrize(
    ("question", "language"), [(q, lang) for lang, qs in SHORT.items() for q in qs], ids=lambda v: str(v)[:30]
)
def test_short_questions_are_told_apart_in_the_languages_companies_write(question, language):
    assert detect(question) == language


@pytest.mark.parametrize(
    "question",
    [
        "formas de pago de los impuestos municipales",
        "limite de pago en efectivo en caja",
        "que equipamiento lleva la camper",
    ],
)
def test_a_romance_de_or_an_unaccented_que_is_no_evidence_of_dutch_or_french_alone(question):
    # "de" is Dutch, and the commonest word of Spanish and French; Spanish typed without accents writes "que":
    # such a question was refused as Dutch or French on Spanish documents.
    assert detect(question) in ("es", None)


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("acompte de 30 a verser", "fr"),  # French without accents: "a" for "à"
        ("tarif chef de projet a l heure", "fr"),
        ("de 9h a 18h ?", "fr"),
        ("need a de-icing quote", "en"),
        ("a de minimis grant", "en"),
    ],
)
def test_a_and_de_are_no_evidence_of_portuguese(question, language):
    # Portuguese writes "a" and "de" too, but so do French typed without accents and English: counted for
    # Portuguese, they turned these away as a language the bot can't read.
    assert detect(question) in (language, None)


def test_no_english_gold_question_is_taken_for_another_language():
    root = Path(__file__).resolve().parents[3] / "evals"
    questions = [
        json.loads(line)["question"]
        for name in ("demo.jsonl", "policies.jsonl")
        for line in (root / name).read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert len(questions) > 200
    assert [q for q in questions if detect(q) not in ("en", None)] == []


def test_question_languages_are_a_setting():
    assert from_env({}).question_languages == ("en",)
    assert from_env({"VERBATIM_QUESTION_LANGUAGES": "en, de"}).question_languages == ("en", "de")
    assert from_env({"VERBATIM_QUESTION_LANGUAGES": "any"}).question_languages == ()


GERMAN_TERMS = (
    "---\ntitle: Lieferbedingungen\naudience: public\n---\n## Lieferung\n\n"
    "Die Lieferung kostet 40 EUR bis 15 km. Wir liefern von Montag bis Freitag, und auch am Samstag gegen Aufpreis.\n"
)


def _german_pipeline(tmp_path, env):
    from core.answering.pipeline import Pipeline
    from core.common.settings import from_env
    from core.measuring.fakes import WordEmbedder
    from core.retrieval.knowledge import KnowledgeBase

    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "lieferung.md").write_text(GERMAN_TERMS, encoding="utf-8")
    settings = from_env({"VERBATIM_KNOWLEDGE_DIR": str(folder), "VERBATIM_DATA_DIR": str(tmp_path / "var"), **env})
    kb = KnowledgeBase(settings, WordEmbedder(64, "de"))
    kb.sync()
    return Pipeline(settings, kb)


def test_questions_in_the_documents_language_are_read_with_no_setting(tmp_path):
    pipeline = _german_pipeline(tmp_path, {})
    answer = pipeline.answer("Wie viel kostet die Lieferung?", SCOPES["public"])
    assert answer.reason != "language"
    assert answer.retrieved, "the question was searched, not turned away"
    russian = pipeline.answer("Сколько стоит доставка?", SCOPES["public"])
    assert (russian.reason, russian.languages) == ("language", ("en", "de"))


def test_a_set_question_language_list_is_kept_as_it_is(tmp_path):
    pipeline = _german_pipeline(tmp_path, {"VERBATIM_QUESTION_LANGUAGES": "en"})
    answer = pipeline.answer("Wie viel kostet die Lieferung?", SCOPES["public"])
    assert (answer.reason, answer.languages) == ("language", ("en",))


SPANISH_HOURS = (
    "---\ntitle: Horario del taller\naudience: public\n---\n## Horario\n\n"
    "El taller abre de lunes a viernes de 9:00 a 19:00 y los sábados de 10:00 a 14:00. "
    "Los domingos y festivos está cerrado. Para una reparación urgente puedes llamarnos y te damos una cita "
    "en el mismo día, si hay un hueco libre en la agenda del taller.\n"
)


def test_an_unaccented_spanish_question_on_spanish_documents_is_read_as_spanish(tmp_path):
    from core.answering.pipeline import Pipeline
    from core.common.settings import from_env
    from core.measuring.fakes import WordEmbedder
    from core.retrieval.knowledge import KnowledgeBase

    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "horario.md").write_text(SPANISH_HOURS, encoding="utf-8")
    settings = from_env({"VERBATIM_KNOWLEDGE_DIR": str(folder), "VERBATIM_DATA_DIR": str(tmp_path / "var")})
    kb = KnowledgeBase(settings, WordEmbedder(64, "es"))
    kb.sync()
    pipeline = Pipeline(settings, kb)
    question = "a que hora abren sabados"
    assert detect(question) == "pt", "without accents, the words alone read as Portuguese"
    answer = pipeline.answer(question, SCOPES["public"])
    assert answer.reason != "language" and answer.reply_language == "es", (
        "read as the documents' Spanish, not turned away"
    )
    russian = pipeline.answer("Во сколько вы открываетесь?", SCOPES["public"])
    assert russian.reason == "language", "a language no neighbour of the documents' is still named honestly"


# A rental price list as a spreadsheet keeps it: its header says "per" on every row, and no row says more.
RATES = "Bike,Price per day (EUR),Price per week (EUR),Deposit (EUR)\n" + "".join(
    f"E-bike {n},{40 + n},{200 + n},300\n" for n in range(12)
)


def test_a_table_is_told_by_its_header_and_cell_words_not_by_how_often_its_rows_repeat_them():
    from core.ingest.readers import parse_document

    assert parse_document("rates.csv", RATES.encode()).language == "", "a hundred rows that say 'per' are not Italian"
    notes = (
        "Service,Price (EUR),Notes\nFitting,45,Only with a booking\nDelivery,40,Free for the first 15 km\n"
        "Measuring,0,Included in the price of a kitchen\nDisposal,30,Ask at the desk about old kitchens\n"
    )
    assert parse_document("services.csv", notes.encode()).language == "en"
    german = (
        "Leistung,Preis pro Stunde,Hinweis\nMontage,45,nur mit Termin\nLieferung,40,bis 15 km\n"
        "Aufmaß,0,für Kunden kostenlos\nEntsorgung,30,gilt für alte Küchen\n"
    )
    assert parse_document("preise.csv", german.encode()).language == "de"
