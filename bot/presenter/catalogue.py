"""The message catalogues: every sentence a chat user reads, one TOML file per language.

    catalogues/en.toml   the reference: every key, with its {placeholders}
    catalogues/de.toml   …one file per language, the same keys (tests/bot/test_catalogues.py checks it)

A translator edits only those files. `speaking(code)` is the catalogue for an ISO 639-1 code, English
for a language without one; `Catalogue(key, **values)` fills one sentence in. Quotes are never
translated: they are the documents' own words.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).with_name("catalogues")
DEFAULT = "en"


def languages() -> tuple[str, ...]:
    """The languages a catalogue exists for, English first."""
    found = sorted(p.stem for p in FOLDER.glob("*.toml"))
    return (DEFAULT, *(code for code in found if code != DEFAULT))


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@cache
def read(code: str) -> dict[str, Any]:
    """One catalogue's entries, keyed `section.key` (`refusal.heading`, `notes.discarded.one`)."""
    with (FOLDER / f"{code}.toml").open("rb") as file:
        return _flatten(tomllib.load(file))


@dataclass(frozen=True)
class Catalogue:
    """The sentences of one language; a key it lacks falls back to English, so nothing shows a key."""

    language: str

    def entry(self, key: str) -> Any:
        own = read(self.language)
        return own[key] if key in own else read(DEFAULT)[key]

    def __call__(self, key: str, **values: object) -> str:
        text: str = self.entry(key)
        return text.format(**values) if values else text

    def counted(self, key: str, n: int) -> str:
        """`key.one` for 1, else `key.other` with {n}: the plural these languages need."""
        return self(f"{key}.one") if n == 1 else self(f"{key}.other", n=n)

    def name(self, code: str) -> str:
        """A language's name in this language ("Deutsch", "allemand"), or its code when unknown."""
        names = read(self.language)
        return str(names.get(f"names.{code}") or read(DEFAULT).get(f"names.{code}") or code)

    def listed(self, items: list[str]) -> str:
        """ "a, b or c" in this language."""
        if len(items) <= 1:
            return "".join(items)
        return f"{', '.join(items[:-1])} {self('language.or')} {items[-1]}"


@cache
def spoken(code: str | None) -> str | None:
    """The catalogue language `code` names ("de", "de-AT", "pt_BR" are read by their language), None when none."""
    language = (code or "").replace("_", "-").split("-")[0].lower()
    return language if language in languages() else None


def speaking(code: str | None) -> Catalogue:
    """The catalogue for `code`, English when there is none."""
    return Catalogue(spoken(code) or DEFAULT)


ENGLISH = speaking(DEFAULT)
