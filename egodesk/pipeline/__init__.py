"""Jobs that run the lower layers in order: durable, resumable, cancellable ingest and memory building,
and asking a question. The only place that knows the order of stages; it reports progress as
(stage, done, total) events for the CLI and the GUI alike.
"""
