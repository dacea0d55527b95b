"""How a command stops on an error it expects: one red line that says what to change, no traceback.

Every command's ``main`` (training, the arena, exploitability, model cards, sweeps, RLlib) ends
its ``except`` clauses with ``return error_exit(console, error)``, so that all of them word a
refused file or a full disk alike and agree on the exit codes: 1 for what the machine refused
(a folder, a disk: ``describe_os_error`` names the path), 2 for what the user gave.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from domino_env.files import describe_os_error


def error_exit(console: Console, error: Exception, label: str = "error") -> int:
    """Print ``error`` as one line after ``label``; the command's exit code."""
    machine = isinstance(error, OSError)
    text = describe_os_error(error) if machine else str(error)
    console.print(f"[red]{label}:[/red] {escape(text)}", soft_wrap=True)
    return 1 if machine else 2
