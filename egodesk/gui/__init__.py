"""The desktop app (PySide6 + qasync). The only package that imports Qt.

Windows, widgets, Qt item models and the one background-task runner that every view uses to call the
pipeline and retrieval layers as plain Python, off the GUI thread.
"""
