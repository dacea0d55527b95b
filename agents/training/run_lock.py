"""One training run per run folder: an OS lock that two trainers given the same ``name`` cannot share.

Without it both write the same checkpoints, labels and TensorBoard folder, and the files left
are a mix of the two runs. The lock is ``fcntl.flock`` on ``<run>/.lock``: the OS drops it when
the holder exits however it ends (a kill included), so a stale lock file never blocks a restart.
The file holds the holder's PID, which the refusal names.

``exclusive(path)`` is the waiting kind, for a read-modify-write of one file (a model card):
a second writer waits for the first instead of overwriting what it added.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from agents.configuration import ConfigError


class RunFolderLocked(ConfigError):
    """Another process trains in this run folder."""


class RunLock:
    """``with RunLock(run_dir):`` holds the folder's lock for the block; RunFolderLocked if taken."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / ".lock"
        self.handle: int | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(handle, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(handle)
            raise RunFolderLocked(
                f"{self.path.parent} is in use by another training run (PID {holder}); wait for it to "
                "end, or give this run another name (name=...)"
            ) from None
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{os.getpid()}\n".encode(), 0)
        self.handle = handle
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.handle is not None:
            os.close(self.handle)  # closing drops the lock; the file stays, harmless
            self.handle = None


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold ``path``'s write lock (``.<name>.lock`` beside it) for the block, waiting for another holder."""
    handle = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)
