"""What a browser would not show of a page, found without running it, so that the HTML reader never indexes it.

Hidden are elements with the `hidden` attribute or aria-hidden="true", and what a style hides, inline or by a
`<style>` rule whose selector is simple (`p`, `.note`, `#id`, `p.note`): display:none, opacity:0, a box of
no height or width that clips what overflows, clip / clip-path to nothing, a box moved past the page's left
or top edge (left, top or text-indent of -999px or less), and text that is invisible where it stands:
visibility:hidden, font-size:0, color:transparent, or the colour of the background behind it (the nearest
one set on the element or above it; a page without one is white). Property names and values, attribute
values, classes and ids all match case-insensitively.

Only what the page alone decides counts (html_styles says which of its rules we apply). What a rule we
don't apply, or a linked stylesheet, may set is not judged, so that no visible text is dropped on a guess.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from core.ingest.readers.html_styles import Sheet, Style, winner, winning

Rgba = tuple[float, float, float, float]

_PAINTS = ("text-shadow", "-webkit-text-stroke", "-webkit-text-fill-color")
_WHITE: Rgba = (255, 255, 255, 1.0)
_BLACK: Rgba = (0, 0, 0, 1.0)
_NAMED: dict[str, Rgba] = {"white": _WHITE, "black": _BLACK, "transparent": (0, 0, 0, 0.0)}
_NUMBER = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))([a-z%]*)")
_TOKEN = re.compile(r"[a-z-]+\([^)]*\)|#[0-9a-f]+|[a-z-]+")
_HEX = re.compile(r"[0-9a-f]{6}")
_PX = {"": 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4, "em": 16.0}
_PX |= {"rem": 16.0, "ex": 8.0, "ch": 8.0}
_RELATIVE_SIZES = {"em", "%", "ex", "ch", "smaller", "larger"}
_SIZES = (("width", "max-width"), ("height", "max-height"))  # across, down: as _overflow's pair
_OWN_COLOURS = {"a", "font", "body", "table", "tr", "td", "th"}  # a colour without a style: see _color, _backdrop
_OFF_PAGE = -999.0  # px: past the left or top edge, where no scrolling reaches (right and bottom grow the page)


class _Seen(NamedTuple):
    """What text inherits: its colour and what is behind it (None: can't tell), a zero font size,
    visibility:hidden, and whether it is painted some other way (a shadow, a stroke, a clipped background)."""

    color: Rgba | None
    backdrop: Rgba | None
    tiny: bool
    invisible: bool
    painted: bool

    def hides_text(self) -> bool:
        if self.invisible or self.tiny:
            return True
        if self.painted or self.color is None:
            return False
        return self.color[3] == 0 or (self.color[3] == 1 and self.backdrop == self.color)


def drop_unseen(soup: Any, sheet: Sheet) -> None:
    """Removes from `soup` the elements a browser would not show and the text it would show invisibly."""
    from bs4 import NavigableString, Tag
    from bs4.element import PreformattedString

    page = _Seen(_BLACK, None if sheet.linked else _WHITE, False, False, False)
    pending: list[tuple[Any, _Seen]] = [(soup, page)]  # a stack, not recursion: pages nest without end
    while pending:
        element, seen = pending.pop()
        for child in list(element.children):
            if isinstance(child, Tag):
                if child.name == "title":
                    continue  # never shown on the page, and always the document's name
                style, unsure = sheet.style(child)
                if _hides_box(child, style):
                    child.decompose()
                else:
                    pending.append((child, _inherit(seen, child, style, unsure)))
            elif isinstance(child, NavigableString) and not isinstance(child, PreformattedString) and seen.hides_text():
                # The space between two visible words in a font-size:0 row of boxes still parts them.
                child.replace_with(" " if any(c.isspace() for c in child) else "")


def _hides_box(tag: Any, style: Style) -> bool:
    """Whether `tag` and everything in it is out of sight, whatever its descendants say."""
    if tag.has_attr("hidden") or str(tag.get("aria-hidden") or "").strip().lower() == "true":
        return True
    if not style or tag.name in ("html", "body"):
        return False  # a page hides its whole body only until its script shows it; we index what it shows
    value = {name: found[1] for name, found in style.items()}
    overflow = _overflow(style)
    return (
        value.get("display") == "none"
        or _zero(value.get("opacity"))
        or any(_zero(value.get(name)) and overflow[axis] for axis, names in enumerate(_SIZES) for name in names)
        or _clipped(value.get("clip", ""), value.get("clip-path", ""))
        or any(_px(value.get(name)) <= _OFF_PAGE for name in ("left", "top", "text-indent"))
    )


def _overflow(style: Style) -> tuple[bool, bool]:
    """Whether what overflows is clipped, across and down (`overflow: hidden visible` is across, then down)."""
    shorthand = style.get("overflow")
    parts = shorthand[1].split() if shorthand else []
    clipped = []
    for axis, name in enumerate(("overflow-x", "overflow-y")):
        value = parts[min(axis, len(parts) - 1)] if parts else "visible"
        if name in style and (shorthand is None or style[name][0] >= shorthand[0]):
            value = style[name][1]
        clipped.append(value in ("hidden", "clip"))
    return clipped[0], clipped[1]


def _clipped(clip: str, clip_path: str) -> bool:
    """clip: rect() of no area; clip-path: inset() of 100% across or down, circle(0), ellipse() with a zero radius."""
    shape = re.fullmatch(r"rect\((.*)\)", clip)
    edges = re.split(r"[\s,]+", shape.group(1).strip()) if shape else []
    if len(edges) == 4:
        top, right, bottom, left = (
            (float("inf") if n in (1, 2) else 0.0) if edge == "auto" else _px(edge) for n, edge in enumerate(edges)
        )
        return bottom <= top or right <= left
    shape = re.fullmatch(r"(inset|circle|ellipse)\((.*)\)", clip_path)
    if not shape:
        return False
    values = shape.group(2).split(" round ")[0].split(" at ")[0].split()
    if shape.group(1) != "inset":
        return any(_zero(value) for value in values[:2])
    insets = [float(v[:-1]) if v.endswith("%") and _NUMBER.fullmatch(v) else 0.0 for v in values[:4]]
    if not insets:
        return False
    top, right = insets[0], insets[min(1, len(insets) - 1)]  # CSS's one to four sides: the missing repeat these
    bottom, left = (insets[2] if len(insets) > 2 else top), (insets[3] if len(insets) > 3 else right)
    return top + bottom >= 100 or left + right >= 100


def _inherit(parent: _Seen, tag: Any, style: Style, unsure: set[str]) -> _Seen:
    """What `tag` passes to its text and its children."""
    if not style and not unsure and tag.name not in _OWN_COLOURS:
        return parent  # most elements: nothing of their own
    if unsure:  # what a rule we can't apply may have set is unknown, unless the style attribute sets it
        parent = parent._replace(
            color=None if "color" in unsure else parent.color,
            backdrop=None if "background" in unsure else parent.backdrop,
            tiny=parent.tiny and "font" not in unsure,
        )
    visibility = winner(style, "visibility")
    invisible = parent.invisible
    if visibility in ("hidden", "collapse", "visible") and tag.name not in ("html", "body"):
        invisible = visibility != "visible"
    painted = any(winner(style, name) not in (None, "none", "initial", "unset", "0", "0px") for name in _PAINTS)
    painted |= "text" in (winner(style, "background-clip"), winner(style, "-webkit-background-clip"))
    return _Seen(
        color=_color(tag, winner(style, "color"), parent.color),
        backdrop=_backdrop(tag, winner(style, "background", "background-color", "background-image"), parent.backdrop),
        tiny=_tiny(_font_size(style), parent.tiny),
        invisible=invisible,
        painted=parent.painted or painted,
    )


def _color(tag: Any, value: str | None, parent: Rgba | None) -> Rgba | None:
    if value is None:
        if tag.name == "a":
            return None  # a link has the browser's own colour unless a style gives it one
        attribute = {"font": "color", "body": "text"}.get(tag.name)  # <font color>, <body text>
        value = _attribute_colour(tag, attribute) if attribute else None
        if value is None:
            return parent
    if value in ("inherit", "currentcolor", "unset"):
        return parent
    return _BLACK if value == "initial" else _rgba(value)


def _backdrop(tag: Any, value: str | None, parent: Rgba | None) -> Rgba | None:
    """The colour behind the text in `tag`: its own background if it is one opaque colour, else its parent's."""
    if value is None and tag.name in ("body", "table", "tr", "td", "th"):
        value = _attribute_colour(tag, "bgcolor")
    if value is None or value in ("none", "transparent", "initial", "unset", "inherit"):
        return parent
    if "url(" in value or "gradient(" in value or "var(" in value:
        return None
    colours = [colour for token in _TOKEN.findall(value) if (colour := _rgba(token))]
    if not colours or colours[-1][3] not in (0, 1):
        return None  # a colour we don't know by name, or one we see through
    return parent if colours[-1][3] == 0 else colours[-1]


def _attribute_colour(tag: Any, attribute: str) -> str | None:
    value = str(tag.get(attribute) or "").strip().lower()
    return (f"#{value}" if _HEX.fullmatch(value) else value) or None


def _rgba(value: str) -> Rgba | None:
    """`value` as (red, green, blue, alpha) if it is a colour we can read: black, white, transparent, hex, rgb(),
    hsl() at 0% or 100% lightness."""
    value = value.strip()
    if value in _NAMED:
        return _NAMED[value]
    if re.fullmatch(r"#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})", value):
        digits = value[1:] if len(value) > 5 else "".join(c * 2 for c in value[1:])
        channels = [int(digits[n : n + 2], 16) for n in range(0, len(digits), 2)]
        return (channels[0], channels[1], channels[2], channels[3] / 255 if len(channels) == 4 else 1.0)
    shape = re.fullmatch(r"(rgba?|hsla?)\(([^)]*)\)", value)
    parts = re.split(r"[\s,/]+", shape.group(2).strip()) if shape else []
    if not shape or len(parts) not in (3, 4) or not all(_NUMBER.fullmatch(p) for p in parts):
        return None
    alpha = _fraction(parts[3]) if len(parts) == 4 else 1.0
    if shape.group(1).startswith("hsl"):
        lightness = _fraction(parts[2])
        return (*((255.0,) * 3 if lightness == 1 else (0.0,) * 3), alpha) if lightness in (0, 1) else None
    red, green, blue = (_fraction(p) * 255 if p.endswith("%") else float(p) for p in parts[:3])
    return (red, green, blue, alpha)


def _fraction(value: str) -> float:
    return min(1.0, max(0.0, float(value[:-1]) / 100 if value.endswith("%") else float(value)))


def _font_size(style: Style) -> str | None:
    """font-size, or the size in a `font` shorthand (`font: 0/0 a` is the classic way to hide a heading's text)."""
    found = winning(style, "font-size", "font")
    if found is None or found[0] == "font-size":
        return found[1] if found else None
    for token in found[1].replace("/", " / ").split():
        number = _NUMBER.fullmatch(token)
        if number and (number.group(2) or float(number.group(1)) == 0):  # a bare number is a weight, but for 0
            return token
    return None


def _tiny(value: str | None, parent: bool) -> bool:
    """Whether text set at font-size `value`, under a parent whose text is tiny or not, has no size."""
    if value is None or value in ("inherit", "unset"):
        return parent
    number = _NUMBER.fullmatch(value)
    if number is None:
        return parent and value in _RELATIVE_SIZES
    return float(number.group(1)) == 0 or (parent and number.group(2) in _RELATIVE_SIZES)


def _zero(value: str | None) -> bool:
    number = _NUMBER.fullmatch(value or "")
    return number is not None and float(number.group(1)) == 0


def _px(value: str | None) -> float:
    """A length in CSS pixels (em and rem at 16px); 0 for what isn't one we can convert."""
    number = _NUMBER.fullmatch(value or "")
    return float(number.group(1)) * _PX[number.group(2)] if number and number.group(2) in _PX else 0.0
