"""Models that turn media into text or vectors.

Each role (speech recognition, frame tagger + features, OCR, captioner, text embedder, LLM) is a small
protocol with interchangeable engines, chosen in settings and located through the model manifest.
Heavy inference is meant to run in a worker process; engines themselves are plain synchronous code.
"""
