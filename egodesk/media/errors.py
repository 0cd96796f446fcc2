"""The one error the media layer raises for a bad input file."""

from __future__ import annotations

import os
from pathlib import Path


class MediaError(ValueError):
    """A file egodesk cannot use, with a reason a person can act on: `str()` is "<path>: <reason>"."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self):
        # Ingest runs in worker processes; the default pickling would call __init__ with one argument.
        return (type(self), (self.path, self.reason))
