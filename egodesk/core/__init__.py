"""Domain types, time handling, settings, paths and the model manifest.

The bottom layer: everything else may import it, and it imports nothing of egodesk's. Plain Python
and a few pure libraries (platformdirs, pydantic) only: no media, no models, no database, no Qt.
"""
