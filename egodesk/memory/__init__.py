"""The library's memory: the SQLite store (SQLAlchemy models, migrations), vector indices (hnswlib)
and the builders that turn captions and transcripts into retrievable units: parent-child captions,
interaction records with online consolidation, multi-view atomic indices and visual features.
Vectors are kept in SQLite too, so every index file is a rebuildable cache.
"""
