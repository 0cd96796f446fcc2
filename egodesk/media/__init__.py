"""Media handling: probing footage, planning clips, reading frames, choosing keyframes, extracting audio.

OpenCV and ffmpeg live here. Nothing here knows about models or the database: functions take paths
and numbers and return arrays, timings and plain records from `egodesk.core`.
"""
