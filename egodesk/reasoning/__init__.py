"""Reasoning over retrieved evidence: question analysis, prompt assembly, the JSON-schema answerer
(evidence -> reasoning -> answer) and the grounding check that marks answers citing nothing real.
"""
