"""Named kill points for fault tests: `EGODESK_KILL_AT=<name>` makes the process kill itself with
SIGKILL when it reaches `fault_point(<name>)`, exactly as a crash or `kill -9` would at that moment.
Several names may be given, comma-separated. Unset (always, outside tests) it costs one dict lookup."""

from __future__ import annotations

import os
import signal

KILL_ENV = "EGODESK_KILL_AT"


def fault_point(name: str) -> None:
    wanted = os.environ.get(KILL_ENV)
    if wanted and name in wanted.split(","):
        os.kill(os.getpid(), signal.SIGKILL)
