"""The installation's secret key for ids: conversation keys and user ids are kept only as HMAC-SHA256
under it, so a hash can't be reversed by hashing every plausible id (a Telegram user id, a chat id
and message number), as an unkeyed hash could be in a second.

The key is made at first use, 32 random bytes, and kept where every process on the store finds the
same one: SQLite's in the data folder (`id.key`, mode 0600, out of the run log's own file, so a copy
of the run log doesn't carry it); PostgreSQL's in the database (table `secrets`), which every replica
shares. Lose it and the ids hashed under it can't be matched again: back it up with the run log.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from core.common.errors import RunLogError

SECRET_FILE = "id.key"
_PREFIX = "verbatim-conversation:"


def keyed_hash(secret: bytes, key: str) -> str:
    """`key` (a conversation key, a user id) as the store keeps it: 24 hex digits of HMAC-SHA256."""
    return hmac.new(secret, f"{_PREFIX}{key}".encode(), hashlib.sha256).hexdigest()[:24]


def new_secret() -> str:
    return secrets.token_hex(32)


def parse_secret(text: str, where: str) -> bytes:
    try:
        secret = bytes.fromhex(text.strip())
    except ValueError:
        secret = b""
    if len(secret) < 16:
        raise RunLogError(f"The id key {where} is not a key Verbatim made (64 hex digits expected).")
    return secret


def folder_secret(data_dir: Path, keep: bytes | None = None) -> bytes:
    """The data folder's key, made now when there is none (processes racing to make it agree on one);
    `keep` is written instead of a new key (the key in use, when the data folder was deleted under us)."""
    path = data_dir / SECRET_FILE
    if not path.exists():
        # Written whole under a name of its own, then linked into place: a process that loses the race
        # finds the winner's key, never a half-written file, and the loser's key is never used.
        draft = data_dir / f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        handle = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(handle, "w") as out:
                out.write((keep.hex() if keep else new_secret()) + "\n")
                out.flush()
                os.fsync(out.fileno())
            with contextlib.suppress(FileExistsError):  # another process made it first: theirs is the key
                os.link(draft, path)
        finally:
            draft.unlink(missing_ok=True)
    try:
        return parse_secret(path.read_text(encoding="ascii", errors="replace"), str(path))
    except OSError as exc:
        raise RunLogError(f"The id key {path} can't be read ({exc.strerror}).") from exc
