"""The admins' commands, the same on every surface: `/verbatim status`, `/verbatim reindex`, `/verbatim gaps`."""

from __future__ import annotations

import time

from bot.presenter import reports
from core import Pipeline, admin_status, recent_gaps

SUBCOMMANDS = ("status", "reindex", "gaps")


def subcommand(text: str) -> str:
    """The first word after /verbatim, lower-cased ("" when none)."""
    words = (text or "").split()
    return words[0].lower() if words else ""


def user_hash(pipeline: Pipeline, user_id: int | str) -> str:
    """A user as log lines name them: the hash the run log keeps for the same user's feedback (who=str(id))."""
    return pipeline.state.hashed(str(user_id))


def reply(pipeline: Pipeline, sub: str) -> str:
    """What an admin subcommand answers, as plain text; `reindex` re-reads the folder now (slow: call off the loop)."""
    knowledge = pipeline.knowledge
    if sub == "status":
        return reports.status_text(admin_status(knowledge), time.time())
    if sub == "reindex":
        return reports.sync_text(knowledge.sync())
    if sub == "gaps":
        return reports.gaps_text(recent_gaps(knowledge))
    return reports.ADMIN_USAGE
