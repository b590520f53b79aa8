"""50 private messages from different users in one getUpdates batch: all answered once, and how fast.

Run: python benchmarks/telegram_batch.py [MESSAGES] [--knowledge DIR]   (default 50, the demo)
The real python-telegram-bot Application long-polls a fake Bot API on 127.0.0.1; the extractive
answerer answers. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _chat import DEMO_QUESTIONS, warm_pipeline  # noqa: E402

from bot.telegram import build_application  # noqa: E402
from bot.telegram.config import TelegramSettings  # noqa: E402
from tests.bot.telegram.conftest import TOKEN, FakeBotAPI, private_message, start, stop  # noqa: E402

QUESTIONS = [*DEMO_QUESTIONS, "Can I pay in instalments?"]


async def main(n: int, knowledge: Path) -> None:
    api = FakeBotAPI()
    with api.server, warm_pipeline(knowledge) as pipeline:
        application = build_application(
            TelegramSettings(TOKEN, api_base_url=api.base_url, questions_per_minute=100), pipeline
        )
        batch = [private_message(QUESTIONS[i % len(QUESTIONS)], uid=1000 + i) for i in range(n)]
        await start(application)
        started = time.perf_counter()
        api.updates.append(batch)
        await application.updater.start_polling(poll_interval=0.0, timeout=1)
        sent = await api.wait_for("sendMessage", n, timeout=120)
        last = time.perf_counter()
        await asyncio.sleep(1.0)
        await stop(application)
    chats = [int(r.body["chat_id"]) for r in api.calls("sendMessage")]
    print(f"{n} private messages from {n} users in one getUpdates batch (extractive answerer)")
    print(
        f"  replies: {len(sent)} within the wait, {len(chats)} in all; users answered: {len(set(chats))}; "
        f"lost: {n - len(set(chats))}; answered twice: {len(chats) - len(set(chats))}"
    )
    print(f"  batch delivered → last reply sent: {(last - started) * 1000:.0f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("messages", type=int, nargs="?", default=50)
    parser.add_argument("--knowledge", type=Path, default=ROOT / "knowledge", help="another folder than the demo's")
    args = parser.parse_args()
    asyncio.run(main(args.messages, args.knowledge))
