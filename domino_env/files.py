"""Writing result files so that nothing is lost: whole files or none, strict JSON, one-line errors."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def write_atomic(path: Path, content: str | bytes | Callable[[IO[bytes]], object]) -> None:
    """Write ``path`` whole or not at all: a temporary file in the same folder, fsynced, then a rename.

    A full disk or a kill leaves the previous file (or none), never a truncated one beside a
    stale sibling. ``content``: text, bytes, or a function writing to the open binary file.
    """
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            if callable(content):
                content(file)
            else:
                file.write(content.encode() if isinstance(content, str) else content)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)  # mkstemp makes it private; results are ordinary files
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        if (
            error.filename is None or error.filename == temporary
        ):  # a full disk names no file, or the temporary
            raise OSError(error.errno, error.strerror, str(path)) from error
        raise
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def strict_json(value: Any, indent: int | None = 2) -> str:
    """JSON that every parser reads: a NaN or infinite number (a CI from a single deal) becomes null."""
    return json.dumps(_finite(value), indent=indent, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def check_writable(folder: Path) -> None:
    """Create ``folder`` if needed and prove a file can be written there, before any work is done;
    OSError (naming the folder) otherwise."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:  # the OS names the random probe file: name the folder the user gave
        raise OSError(error.errno, error.strerror, str(folder)) from None


def describe_os_error(error: OSError) -> str:
    """One line for a failed file operation: the path, and what the OS said."""
    where = error.filename if error.filename is not None else ""
    reason = error.strerror or str(error)
    return f"cannot write {where}: {reason}" if where else f"cannot write: {reason}"
