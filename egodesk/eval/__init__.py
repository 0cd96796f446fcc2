"""Benchmarks: loading the benchmark format (memory.jsonl + questions.jsonl), running every question
through a strategy (and optionally the answerer), and the metrics (Hit@K, Recall@K as time coverage,
nDCG@K, accuracy, token F1, abstention, grounding, tokens, latency).
"""
