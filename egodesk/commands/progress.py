"""A terminal progress display for pipeline events: one bar per stage on stderr."""

from __future__ import annotations

import sys

from tqdm import tqdm

from egodesk.core.types import Progress


class ProgressPrinter:
    def __init__(self, titles: dict[int, str] | None = None):
        self.titles = titles or {}
        self.bar: tqdm | None = None
        self.key: tuple | None = None

    def __call__(self, event: Progress) -> None:
        if event.stage == "worker":  # the worker's own start/finish notes, not a stage
            self.close()
            if event.message and not event.message.startswith("{"):
                print(f"  {event.message}", file=sys.stderr)
            return
        key = (event.footage_id, event.stage)
        if event.message.startswith("failed"):
            self.close()
            print(f"  {self._name(event)}: {event.message}", file=sys.stderr)
            return
        if key != self.key:
            self.close()
            self.key = key
            self.bar = tqdm(
                total=event.total or None,
                desc=self._name(event),
                file=sys.stderr,
                leave=True,
                dynamic_ncols=True,
                mininterval=0.5,
            )
        if self.bar is not None:
            if event.total and self.bar.total != event.total:
                self.bar.total = event.total
            self.bar.n = event.done
            self.bar.refresh()

    def _name(self, event: Progress) -> str:
        if event.footage_id is None:  # a whole-run stage (an eval's questions), not one footage's
            return event.stage
        title = self.titles.get(event.footage_id or -1, f"footage {event.footage_id}")
        return f"{title[:28]} {event.stage}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
