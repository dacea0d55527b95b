"""How to install an optional extra, said the same way everywhere a missing one is reported."""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """The commands that add ``extra``: from the published package, and from a clone."""
    return f"pip install 'domino-rl[{extra}]' (from a clone of the repository: pip install -e '.[{extra}]')"
