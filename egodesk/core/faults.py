"""Named fault points for fault tests. `fault_point(name)` does nothing unless a test asked for it:

- `EGODESK_KILL_AT=<name>[#<n>]`: the process kills itself with SIGKILL there (at the n-th time it
  reaches that point when `#<n>` is given), exactly as a crash or `kill -9` would at that moment;
- `EGODESK_STOP_AT=<name>[#<n>]`: the process stops itself (SIGSTOP) there, so a test can copy the
  library at that moment of an otherwise uninterrupted run and then let it go on (SIGCONT);
- `EGODESK_ENOSPC_AT=<name>[#<n>]`: raises OSError(ENOSPC) there, as a write to a full disk would.
Each variable takes several comma-separated points. Unset (always, outside tests) it costs three
environment lookups.
"""

from __future__ import annotations

import errno
import os
import signal

KILL_ENV = "EGODESK_KILL_AT"
STOP_ENV = "EGODESK_STOP_AT"
ENOSPC_ENV = "EGODESK_ENOSPC_AT"

_hits: dict[str, int] = {}  # times each point was reached in this process (counted only under a test)


def fault_point(name: str) -> None:
    wanted = {env: os.environ.get(env) for env in (KILL_ENV, STOP_ENV, ENOSPC_ENV)}
    if not any(wanted.values()):
        return
    hit = _hits[name] = _hits.get(name, 0) + 1
    if _asked(wanted[KILL_ENV], name, hit):
        os.kill(os.getpid(), signal.SIGKILL)
    if _asked(wanted[STOP_ENV], name, hit):
        os.kill(os.getpid(), signal.SIGSTOP)
    if _asked(wanted[ENOSPC_ENV], name, hit):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC) + f" (injected at {name})")


def _asked(spec: str | None, name: str, hit: int) -> bool:
    for item in (spec or "").split(","):
        point, _, nth = item.strip().partition("#")
        if point == name and (not nth or int(nth) == hit):
            return True
    return False
