"""`python -m bot.cli`, as the `verbatim` command."""

import sys

from bot.cli import main

sys.exit(main())
