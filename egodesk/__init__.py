"""egodesk: a personal video-memory app for people who wear a camera.

Footage goes in; local speech recognition and visual description turn it into memories (SQLite plus
hnswlib indices); questions come back answered with clickable evidence. Layers, top to bottom:
core -> media -> perception -> memory -> retrieval -> reasoning -> pipeline -> eval -> cli / gui.
"""

__version__ = "0.1.0"
