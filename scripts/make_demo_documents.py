"""Write the demo knowledge base's non-Markdown documents from the text below.

Run: python scripts/make_demo_documents.py [FOLDER]   (default: knowledge/)

- terms-of-sale.pdf: Hollowmere Joinery's general terms of sale, four pages with an outline
  (bookmarks), written with scripts/minipdf.py (no PDF library needed);
- fitting-guide.docx: fitting our fronts on existing carcasses, with Word heading styles, lists
  and two tables, written with python-docx;
- a `.meta.yml` sidecar beside each (audience, owner, as-of date).

The output is byte-for-byte reproducible, so regenerating changes nothing unless the text did.
Facts here agree with knowledge/*.md; the figures that only these documents hold are the ones
evals/demo.jsonl asks about.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from minipdf import Flow, PdfWriter
from reproducible import office_bytes

# Each page is a list of blocks: ("h1" | "h2", text), ("p", text) or ("li", text).
TERMS: list[list[tuple[str, str]]] = [
    [
        ("p", "Hollowmere Joinery, family joinery workshop. Valid for orders signed from 1 October 2026."),
        ("h1", "1. Scope"),
        (
            "p",
            "These terms apply to every order for furniture, fronts, worktops, staircases and installation "
            "placed with Hollowmere Joinery. Anything agreed differently must be written on the signed quote.",
        ),
        ("h1", "2. Orders and prices"),
        (
            "p",
            "An order is confirmed when you sign the quote and pay the advance described in section 3. "
            "The drawings you approve describe exactly what we make; anything not shown on them is not "
            "part of the order.",
        ),
        (
            "p",
            "The prices in a signed quote are fixed for 6 months from the date of signing. If you postpone "
            "delivery beyond 6 months, we may pass on increases in the cost of timber and boards of more "
            "than 5%, and we tell you the new price in writing before production.",
        ),
        (
            "p",
            "Solid wood is a natural material. Differences of colour and grain between the samples and your "
            "furniture are not defects.",
        ),
    ],
    [
        ("h1", "3. Payment"),
        (
            "p",
            "The advance is 40% of the order total and the balance of 60% is due on the day of delivery, or "
            "on the last day of installation when we install.",
        ),
        (
            "p",
            "Invoices for repairs, extra work and items bought at the workshop are payable within 14 days of "
            "the invoice date.",
        ),
        (
            "p",
            "On late payment we charge interest of 8% a year on the overdue amount from the day after the due "
            "date. Each written payment reminder costs 10 EUR. After the second reminder we may stop work on "
            "any open order of yours until the overdue amount is paid.",
        ),
        ("h1", "4. Retention of title"),
        (
            "p",
            "Everything we deliver remains the property of Hollowmere Joinery until the order is paid in full. "
            "Until then you may not sell it, lend it or give it as security.",
        ),
    ],
    [
        ("h1", "5. Delivery and collection"),
        (
            "p",
            "We tell you when your order is ready and agree a delivery date or a collection date with you. "
            "Delivery fees and carrying charges are set out in our delivery terms.",
        ),
        ("h2", "5.1 Storage of finished orders"),
        (
            "p",
            "If you cannot take delivery or collect your order, we keep it at the workshop: the first 14 days "
            "after the date we told you it was ready are included, and after that storage costs 60 EUR for each "
            "month or part of a month, per order. The balance then becomes due as if the order had been delivered.",
        ),
        (
            "p",
            "An order still not taken after 6 months of storage may be sold to cover the balance and the "
            "storage costs, after a final written notice sent 30 days in advance.",
        ),
        ("h1", "6. Damage in transport"),
        (
            "p",
            "Check the items when they are handed over. Visible damage must be written on the delivery note "
            "before you sign it. Damage found later while unpacking must be reported with photos within 2 "
            "working days of delivery.",
        ),
        (
            "p",
            "We repair or replace items damaged in our transport at no cost to you. Defects that appear later "
            "are handled under our warranty.",
        ),
    ],
    [
        ("h1", "7. Cancellation and returns"),
        (
            "p",
            "Furniture, fronts and worktops made to measure are made to your specification, so the 14-day "
            "right of withdrawal for distance sales does not apply to them.",
        ),
        (
            "p",
            "Unused items from our stock range, such as care kits, handles and hinges, can be returned in "
            "their original packaging within 30 days of purchase for a full refund.",
        ),
        ("h1", "8. Liability"),
        (
            "p",
            "We are liable for damage we cause to your home while delivering or installing. Our liability for "
            "indirect loss, such as lost earnings or the cost of alternative accommodation, is excluded except "
            "where we acted with intent or gross negligence. In all other cases our total liability is limited "
            "to the order total.",
        ),
        ("h1", "9. Complaints and disputes"),
        (
            "p",
            "Send complaints to the workshop in writing. We confirm receipt within 3 working days and give you "
            "our answer within 15 working days. If we cannot agree, either of us may ask the regional Chamber "
            "of Crafts for mediation before going to court.",
        ),
    ],
]

GUIDE_INTRO = (
    "This guide is for customers who fit our fronts on existing kitchen carcasses themselves. Fronts ordered "
    "through us arrive with hinge holes already drilled for the hinge system you named on the order."
)
GUIDE_TOOLS = [
    "A cordless screwdriver with a Phillips No. 2 bit",
    "A spirit level at least 60 cm long",
    "Two 3 mm spacers to set the gaps between fronts",
    "A soft blanket to lay fronts on while you work",
]
GUIDE_HINGES = (
    "Our fronts take 35 mm concealed cup hinges. Fix each hinge plate to the carcass with two 4 × 16 mm "
    "chipboard screws, and each hinge cup to the front with the screws supplied with the hinge."
)
HINGE_TABLE = [
    ["Front height", "Hinges per front", "Hinge positions from top and bottom edge"],
    ["up to 90 cm", "2", "100 mm"],
    ["over 90 cm up to 160 cm", "3", "100 mm, third hinge centred"],
    ["over 160 cm up to 200 cm", "4", "100 mm, two hinges evenly spaced between"],
    ["over 200 cm", "5", "100 mm, three hinges evenly spaced between"],
]
GUIDE_GAPS = (
    "Leave a gap of 3 mm between neighbouring fronts and between a front and a side panel, and 2 mm between "
    "the top of a base front and the worktop. Fronts of solid wood need the full gap, because they move with "
    "the seasons."
)
GUIDE_ADJUST = [
    "Hang the front on its hinge plates and close it.",
    "Turn the front screw of each hinge to move the door sideways until the gaps are even.",
    "Turn the rear screw to move the door in or out until it sits flush with its neighbours.",
    "Loosen the plate screws to move the door up or down, then tighten them again.",
]
DRAWER_TABLE = [
    ["Drawer front width", "Handle screws", "Handle position"],
    ["up to 60 cm", "2 × M4 × 25 mm", "centred, 40 mm below the top edge"],
    ["over 60 cm", "2 × M4 × 25 mm, two handles", "each 150 mm from the side edges"],
]
GUIDE_AFTER = (
    "Oiled fronts need their first coat of maintenance oil 4 weeks after fitting; after that, follow our "
    "product care instructions. Keep the packaging until you have checked every front, in case one has to "
    "go back to the workshop."
)

SIDECARS = {
    "terms-of-sale.pdf": "audience: public\nowner: Sales office\nas_of: 2026-10-01\n",
    "fitting-guide.docx": "audience: public\nowner: Workshop\nas_of: 2026-09-15\n",
}


def terms_pdf() -> bytes:
    pdf = PdfWriter(title="Terms of sale")
    flow = Flow(pdf)
    for number, page in enumerate(TERMS):
        flow.new_page()
        if number == 0:
            flow.heading("Terms of sale", 0, bookmark=False)
        for kind, text in page:
            if kind == "h1":
                flow.heading(text, 1)
            elif kind == "h2":
                flow.heading(text, 2)
            elif kind == "li":
                flow.bullet(text)
            else:
                flow.paragraph(text)
        if len(pdf.pages) != number + 1:
            raise SystemExit(f"page {number + 1} of the terms overflows: shorten its text")
    return pdf.to_bytes()


def fitting_guide_docx() -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.title = "Fitting guide"
    document.core_properties.author = "Hollowmere Joinery"
    document.add_heading("Fitting guide", 0)
    document.add_paragraph(GUIDE_INTRO)
    document.add_heading("Before you start", 1)
    document.add_paragraph("You need:")
    for item in GUIDE_TOOLS:
        document.add_paragraph(item, style="List Bullet")
    document.add_heading("Doors", 1)
    document.add_heading("Hinges", 2)
    document.add_paragraph(GUIDE_HINGES)
    _table(document, HINGE_TABLE)
    document.add_heading("Gaps", 2)
    document.add_paragraph(GUIDE_GAPS)
    document.add_heading("Adjusting a door", 2)
    for step in GUIDE_ADJUST:
        document.add_paragraph(step, style="List Number")
    document.add_heading("Drawer fronts and handles", 1)
    document.add_paragraph(
        "Drawer fronts are fixed from inside the drawer box with four 4 × 25 mm screws. Fit handles after the "
        "fronts are aligned."
    )
    _table(document, DRAWER_TABLE)
    document.add_heading("After fitting", 1)
    document.add_paragraph(GUIDE_AFTER)
    return office_bytes(document)


def _table(document, rows: list[list[str]]) -> None:  # type: ignore[no-untyped-def]
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    table.style = "Table Grid"
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            cell = table.cell(r, c)
            cell.text = value
            if r == 0:
                for run in cell.paragraphs[0].runs:
                    run.bold = True


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "knowledge"
    folder.mkdir(parents=True, exist_ok=True)
    outputs = {"terms-of-sale.pdf": terms_pdf(), "fitting-guide.docx": fitting_guide_docx()}
    for name, data in outputs.items():
        (folder / name).write_bytes(data)
        (folder / f"{name}.meta.yml").write_text(SIDECARS[name], encoding="utf-8")
        print(f"wrote {folder / name} ({len(data):,} bytes) and its .meta.yml")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
