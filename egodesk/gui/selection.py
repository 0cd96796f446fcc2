"""The moments on show and the one picked: shared by the ask panel, the footage view and the timeline.

Each view follows its signals and changes it through its two calls, so picking a moment is one hop
whichever view it starts in (a chip, a marker on the timeline) and no view calls another:
- `show(evidence, answer)`: the moments found for a question (`answer` None while it is written), then
  the answer's; nothing is picked.
- `select(index)`: pick a moment (None: none, as when its loop is dismissed).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from egodesk.core.types import Answer, Evidence


class Selection(QObject):
    shown = Signal()  # the moments (and maybe the answer) changed; nothing is picked
    picked = Signal(object)  # int | None: index into `evidence`

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.evidence: list[Evidence] = []
        self.answer: Answer | None = None
        self.index: int | None = None

    def show(self, evidence: list[Evidence], answer: Answer | None = None) -> None:
        self.evidence, self.answer, self.index = list(evidence), answer, None
        self.shown.emit()

    def select(self, index: int | None) -> None:
        """Pick moment `index` (picking it again replays it) or none."""
        if (index is None and self.index is None) or (index is not None and not 0 <= index < len(self.evidence)):
            return
        self.index = index
        self.picked.emit(index)

    @property
    def picked_evidence(self) -> Evidence | None:
        return self.evidence[self.index] if self.index is not None else None
