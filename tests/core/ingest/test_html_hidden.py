"""What a browser would not show of a page is never indexed: each way a page hides text, inline or by a rule of its
own `<style>` blocks, and matched whatever its case; and what it does show is kept."""

from __future__ import annotations

import pytest

from core.ingest.fragments import fragment_document
from core.ingest.readers import html, parse_document
from tests.conftest import REPO, load_file

SHOWN = "Oak fronts cost 185 EUR per square metre."
SECRET = "Staff get a 90% discount"


def text_of(body: str, head: str = "") -> str:
    page = f"<html><head><title>Prices</title>{head}</head><body>{body}<p>{SHOWN}</p></body></html>"
    return "\n".join(" › ".join((*section.path, section.text)) for section in html.read(page.encode()).sections)


# One page per way of hiding: (the hidden element, the page's <style> block).
HIDDEN = {
    "font-size:0": (f"<p style='font-size:0'>{SECRET}</p>", ""),
    "font-size:0px in a class": (f"<p class='tiny'>{SECRET}</p>", "<style>.tiny { FONT-SIZE: 0PX }</style>"),
    "font:0/0 shorthand": (f"<h2 style='font: 0/0 a'>{SECRET}</h2>", ""),
    "opacity:0": (f"<div style='opacity: 0'>{SECRET}</div>", ""),
    "opacity:0.0 in a class": (f"<div class='Ghost'>{SECRET}</div>", "<style>.ghost{opacity:.0}</style>"),
    "left:-9999px": (f"<div style='position:absolute;left:-9999px'>{SECRET}</div>", ""),
    "left:-10000px in an id rule": (
        f"<div id='away'>{SECRET}</div>",
        "<style>#away{position:absolute;left:-10000px}</style>",
    ),
    "top:-9999px": (f"<div style='position:absolute;top:-9999px'>{SECRET}</div>", ""),
    "text-indent:-9999px": (f"<h2 style='text-indent:-9999px;overflow:hidden'>{SECRET}</h2>", ""),
    "text-indent:-999em": (f"<p style='TEXT-INDENT:-999EM'>{SECRET}</p>", ""),
    "white on a white background": (f"<p style='color:#fff;background:#fff'>{SECRET}</p>", ""),
    "white on a white ancestor": (
        f"<div style='background-color:white'><p style='color:#FFFFFF'>{SECRET}</p></div>",
        "",
    ),
    "rgb(255,255,255) on the white page": (f"<p style='color:rgb(255, 255, 255)'>{SECRET}</p>", ""),
    "white in a class on a white body": (
        f"<span class='w'>{SECRET}</span>",
        "<style>body{background:#ffffff}.w{color:white}</style>",
    ),
    "white font on the white page": (f"<font color='#ffffff'>{SECRET}</font>", ""),
    "color:transparent": (f"<p style='color:transparent'>{SECRET}</p>", ""),
    "display:none from a class": (f"<div class='x'>{SECRET}</div>", "<style>.x { display: none }</style>"),
    "display:none from an element rule": (f"<dfn>{SECRET}</dfn>", "<style>dfn{display:none!important}</style>"),
    "DISPLAY:NONE in an upper-case class": (f"<P CLASS='Gone'>{SECRET}</P>", "<STYLE>.GONE{DISPLAY:NONE}</STYLE>"),
    "aria-hidden=TRUE": (f"<span aria-hidden='TRUE'>{SECRET}</span>", ""),
    "height:0;overflow:hidden": (f"<div style='height:0;overflow:hidden'>{SECRET}</div>", ""),
    "max-height:0;overflow:hidden in a class": (
        f"<div class='fold'>{SECRET}</div>",
        "<style>.fold{max-height:0px;overflow:hidden}</style>",
    ),
    "width:0;overflow-x:clip": (f"<div style='width:0;overflow-x:clip'>{SECRET}</div>", ""),
    "clip-path:inset(100%)": (f"<div style='clip-path:inset(100%)'>{SECRET}</div>", ""),
    "clip-path:inset(50%)": (f"<div style='clip-path: inset(50%)'>{SECRET}</div>", ""),
    "clip-path:circle(0)": (f"<div style='clip-path:circle(0)'>{SECRET}</div>", ""),
    "clip:rect(0,0,0,0)": (f"<span style='position:absolute;clip:rect(0,0,0,0)'>{SECRET}</span>", ""),
    "clip:rect(0 0 0 0) in a class": (
        f"<span class='sr-only'>{SECRET}</span>",
        "<style>.sr-only{position:absolute;clip:rect(0 0 0 0)}</style>",
    ),
    "clip:rect(1px,1px,1px,1px)": (
        f"<span style='position:absolute;clip:rect(1px, 1px, 1px, 1px)'>{SECRET}</span>",
        "",
    ),
    "visibility:hidden in a class": (f"<div class='v'>{SECRET}</div>", "<style>.v{Visibility: Hidden}</style>"),
    "visibility:collapse": (f"<div style='visibility:collapse'>{SECRET}</div>", ""),
    "hidden attribute": (f"<p HIDDEN>{SECRET}</p>", ""),
}


@pytest.mark.parametrize("way", HIDDEN)
def test_text_hidden_this_way_is_dropped_and_the_visible_text_kept(way):
    element, head = HIDDEN[way]
    text = text_of(element, head)
    assert SECRET not in text
    assert SHOWN in text


def test_what_a_child_shows_again_is_kept():
    # Rows of inline blocks set font-size:0 against the gaps between them; each block sets its own size.
    text = text_of(
        "<div style='font-size:0'> <span style='font-size:14px'>Walnut</span>"
        f" <span style='font-size:1rem'>fronts</span> <em style='font-size:2em'>{SECRET}</em></div>"
        "<div style='visibility:hidden'><p style='visibility:visible'>Delivery is free.</p></div>"
    )
    assert "Walnut fronts" in text and "Delivery is free." in text
    assert SECRET not in text  # twice nothing is nothing


def test_white_text_on_a_background_that_is_not_white_is_kept():
    text = text_of(
        "<div style='background:#222'><p style='color:#fff'>Dark banner.</p></div>"
        "<p style='color:white;background:url(wood.jpg) #fff'>Over a photo.</p>"
        "<p style='color:#fff;background:teal'>Teal.</p>"
        "<p style='color:#fff;text-shadow:0 0 2px #000'>Outlined.</p>"
        "<div style='color:#fff'><a href='/'>A link.</a></div>",
        "<style>body { background: #ffffff }</style>",
    )
    for shown in ("Dark banner.", "Over a photo.", "Teal.", "Outlined.", "A link."):
        assert shown in text


def test_white_text_is_kept_where_a_linked_stylesheet_may_paint_the_page():
    text = text_of("<p style='color:#fff'>On the theme's dark page.</p>", "<link rel='stylesheet' href='theme.css'>")
    assert "On the theme's dark page." in text


def test_rules_that_apply_only_sometimes_are_not_applied_nor_let_others_decide():
    # Shown on wide screens: the class's display:none is not the whole story, so the text stays.
    text = text_of(
        "<div class='wide'>Wide screens.</div><div class='printed'>Printed only.</div><p class='note'>Noted.</p>",
        "<style>.wide{display:none} @media (min-width: 768px) { .wide { display: block } }"
        " @media print { .printed { display: block } } .printed{display:none} .notes .note{display:none}</style>",
    )
    assert "Wide screens." in text and "Noted." in text
    assert "Printed only." not in text


def test_the_cascade_decides_between_rules():
    text = text_of(
        "<p class='a b'>Shown by the later rule.</p><p class='a' id='k'>Shown by the id.</p>"
        "<p class='a' style='display:block'>Shown inline.</p><p class='c' style='display:block'>Hidden, important.</p>",
        "<style>.a{display:none}.a.b{display:block}#k{display:block}.c{display:none !important}</style>",
    )
    for shown in ("Shown by the later rule.", "Shown by the id.", "Shown inline."):
        assert shown in text
    assert "Hidden, important." not in text


def test_a_script_revealed_body_and_near_misses_are_kept():
    page = (
        "<html><head><title>T</title><style>body{opacity:0}</style></head><body style='visibility:hidden'>"
        "<p style='left:-50px;position:relative'>Nudged.</p><p style='height:0'>Overflows visibly.</p>"
        "<p style='font-size:0.9em'>Small print.</p><p style='clip-path:inset(10%)'>Framed.</p></body></html>"
    )
    text = " ".join(section.text for section in html.read(page.encode()).sections)
    for shown in ("Nudged.", "Overflows visibly.", "Small print.", "Framed."):
        assert shown in text


def test_the_benchmarks_hidden_pages_keep_their_sentence_out_of_the_fragments(in_process_readers):
    benchmark = load_file(REPO / "benchmarks" / "hostile_documents.py")
    for name, make in benchmark.hidden_pages().items():
        document = parse_document(name, make())
        indexed = " ".join(f"{f.section_path} {f.text}" for f in fragment_document(document))
        assert benchmark.SECRET not in indexed, name
        assert "Oak fronts cost 185 EUR" in indexed, name
