"""Retrieval strategies over the store and its indices: flat, subchunk, parent, hybrid, parent-time,
rerank, records, timeaware, carve, context and auto. Each maps a question to ranked evidence units with times,
scores and provenance. Fusion, reranking, temporal intent and the evidence pool live here too.
"""
