"""``python -m agents.web``: the web table, as ``domino-serve`` starts it."""

import sys

from agents.web.cli import main

sys.exit(main())
