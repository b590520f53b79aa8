"""A page's own styles, as far as they decide what it shows: the rules of its `<style>` blocks that simple
selectors (`p`, `.note`, `#id`, `p.note`) apply, in the cascade's order, below the element's style attribute.

Rules for print are ignored. Rules that apply only sometimes (@media with conditions, @supports) or that we don't
match (selectors with combinators, attributes or pseudo-classes) are not applied, and for the elements whose tag,
class or id they name, no other rule of the sheet is trusted for what they set: only the element's own style
attribute, which they can't override. A linked stylesheet may set anything for an element with a class or id.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

Style = dict[str, tuple[tuple[Any, ...], str]]  # property: (cascade rank, value); the highest rank wins

MAX_RULES = 2_000  # simple rules that matter here, per page: each element is checked against those naming it
GROUPS = {
    **dict.fromkeys(("display", "opacity", "visibility", "height", "max-height", "width", "max-width", "overflow",
                     "overflow-x", "overflow-y", "clip", "clip-path", "left", "top", "text-indent"), "box"),
    **dict.fromkeys(("font", "font-size"), "font"),
    **dict.fromkeys(("color", "text-shadow", "-webkit-text-stroke", "-webkit-text-fill-color", "background-clip",
                     "-webkit-background-clip"), "color"),
    **dict.fromkeys(("background", "background-color", "background-image"), "background"),
}  # fmt: skip
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_BRACE = re.compile(r"[{}]")
_IMPORTANT = re.compile(r"\s*!\s*important\s*$")
_SIMPLE = re.compile(r"(\*|[a-z][a-z0-9-]*)?((?:[.#][\w-]+)*)")
_PART = re.compile(r"([.#])([\w-]+)")
_TAG = re.compile(r"(?:^|[\s>+~(])([a-z][a-z0-9-]*)")
_ALWAYS = re.compile(r"@media\s+(?:only\s+)?(?:screen|all)")
_PRINT = re.compile(r"@media\s+(?:only\s+)?print\b[^,]*")


class _Rule(NamedTuple):
    """One simple selector of a rule, with the declarations of the rule that matter here."""

    tag: str  # "" or "*": any
    ids: set[str]
    classes: set[str]
    specificity: tuple[int, int, int]
    order: int
    declared: list[tuple[str, str, bool]]


class Sheet:
    """The rules of a page's `<style>` blocks: the ones we apply by the tag, class or id they name, and what the
    others may set, by the tags, classes and ids they name."""

    def __init__(self, css: str, linked: bool = False) -> None:
        self.rules: dict[str, list[_Rule]] = {}
        self.unsure: dict[str, set[str]] = {}
        self.linked = linked or "@import" in css.lower()
        self._cache: dict[tuple[Any, ...], tuple[Style, set[str]]] = {}
        self._count = 0
        for prelude, body in _blocks(_COMMENT.sub(" ", css.lower())):
            if _ALWAYS.fullmatch(prelude):
                self._add_block(body, sure=True)
            elif prelude.startswith(("@media", "@supports", "@container", "@layer", "@scope", "@document")):
                if not _PRINT.fullmatch(prelude):
                    self._add_block(body, sure=False)
            elif not prelude.startswith("@"):  # @keyframes, @font-face, @page: nothing they set is shown text
                self._add(prelude, body, sure=True)

    @classmethod
    def of(cls, soup: Any) -> Sheet:
        """The sheet of a page, read before its `<style>` blocks are dropped."""
        linked = any("stylesheet" in " ".join(link.get_attribute_list("rel")).lower() for link in soup("link"))
        return cls("\n".join(style.get_text() for style in soup.find_all("style")), linked)

    def _add_block(self, css: str, sure: bool) -> None:
        for prelude, body in _blocks(css):
            if not prelude.startswith("@"):
                self._add(prelude, body, sure)
            elif not prelude.startswith(("@keyframes", "@font-face", "@page")):
                self._add_block(body, sure=False)

    def _add(self, selectors: str, body: str, sure: bool) -> None:
        declared = [(p, v, i) for p, v, i in declarations(body.replace("{", ";").replace("}", ";")) if p in GROUPS]
        if not declared:
            return
        groups = {GROUPS[name] for name, _, _ in declared}
        for selector in selectors.split(","):
            simple = _simple(selector) if sure and "{" not in body else None
            if simple is None or self._count >= MAX_RULES:
                for key in _reach(selector):
                    self.unsure.setdefault(key, set()).update(groups)
                continue
            tag, ids, classes = simple
            specificity = (len(ids), len(classes), int(tag not in ("", "*")))
            key = f"#{ids[0]}" if ids else f".{classes[0]}" if classes else tag
            self.rules.setdefault(key, []).append(
                _Rule(tag, set(ids), set(classes), specificity, self._count, declared)
            )
            self._count += 1

    def style(self, tag: Any) -> tuple[Style, set[str]]:
        """The declarations that apply to `tag` (its rules by specificity and order, below its inline style), and
        the groups of properties ("box", "font", "color", "background") a rule we can't apply may set for it."""
        names = {str(name).casefold() for name in tag.get_attribute_list("class") if name}
        ident = str(tag.get("id") or "").casefold()
        key = (tag.name, ident, frozenset(names))
        if key not in self._cache:
            reach = {tag.name, "*", *(f".{name}" for name in names), *([f"#{ident}"] if ident else [])}
            unsure = set().union(*(self.unsure.get(k, ()) for k in reach))
            if self.linked and (names or ident):
                unsure |= {"color", "background", "font"}
            found: Style = {}
            for rule in (rule for k in reach for rule in self.rules.get(k, ())):
                if rule.tag in ("", "*", tag.name) and rule.ids <= {ident} and rule.classes <= names:
                    for index, (name, value, important) in enumerate(rule.declared):
                        if GROUPS[name] not in unsure:
                            _cascade(found, name, (important, 0, rule.specificity, rule.order, index), value)
            self._cache[key] = (found, unsure)
        found, unsure = self._cache[key]
        style = dict(found)
        for index, (name, value, important) in enumerate(declarations(str(tag.get("style") or ""))):
            _cascade(style, name, (important, 1, (0, 0, 0), 0, index), value)
        return style, unsure


def declarations(text: str) -> list[tuple[str, str, bool]]:
    """(property, value, !important) of a declaration block, property and value lower-cased."""
    found = []
    for part in text.split(";"):
        name, colon, value = part.partition(":")
        if colon:
            value = value.strip().lower()
            important = _IMPORTANT.search(value)
            found.append((name.strip().lower(), value[: important.start()] if important else value, bool(important)))
    return found


def winning(style: Style, *names: str) -> tuple[str, str] | None:
    """(property, value) of the one of `names` that the cascade puts last."""
    found = [(style[name][0], name, style[name][1]) for name in names if name in style]
    return max(found)[1:] if found else None


def winner(style: Style, *names: str) -> str | None:
    """The value of the one of `names` that the cascade puts last."""
    found = winning(style, *names)
    return found[1] if found else None


def _cascade(style: Style, name: str, rank: tuple[Any, ...], value: str) -> None:
    if name not in style or rank >= style[name][0]:
        style[name] = (rank, value)


def _simple(selector: str) -> tuple[str, list[str], list[str]] | None:
    """(tag, ids, classes) of a compound selector like `p.note#x`, else None (combinators, attributes,
    pseudo-classes). Classes and ids fold case, as a page without a doctype does."""
    shape = _SIMPLE.fullmatch(selector.strip())
    if shape is None or not selector.strip():
        return None
    parts = _PART.findall(shape.group(2))
    return shape.group(1) or "", [n for k, n in parts if k == "#"], [n for k, n in parts if k == "."]


def _reach(selector: str) -> set[str]:
    """The tags, classes and ids a selector we don't apply names; "*" when what it selects may be anything."""
    keys = {kind + name for kind, name in _PART.findall(selector)} | set(_TAG.findall(selector))
    subject = re.split(r"[\s>+~]+", selector.strip())[-1]
    if not re.search(r"^[a-z]|[.#][\w-]", subject):
        keys.add("*")  # `[hidden]`, `:hover`, `*`
    return keys


def _blocks(css: str) -> list[tuple[str, str]]:
    """(prelude, body) of each top-level block: a rule's selectors and declarations, an at-rule and its rules."""
    found: list[tuple[str, str]] = []
    depth, start, prelude, last = 0, 0, "", 0
    for brace in _BRACE.finditer(css):
        if brace.group() == "{":
            if depth == 0:
                prelude, start = css[last : brace.start()].rsplit(";", 1)[-1].strip(), brace.end()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                found.append((" ".join(prelude.split()), css[start : brace.start()]))
                last = brace.end()
    return found
