"""Who is who among the faces: one footage's face prints grouped into people, and those groups matched
to the library's known faces (the face counterpart of `diarize.VoiceBook`).

The rules, both at `faces.SAME_PERSON` (Euclidean distance between 128-d prints):
1. Within a footage: average-linkage clustering of its sightings cut at SAME_PERSON. Average linkage,
   not single: a chain of near sightings (a face turning) may not join two people through one blurred
   frame between them.
2. Across the library: each group joins the known face whose centroid is nearest, if nearer than
   SAME_PERSON, the nearest pairs first, one group per known face within a footage (two groups of one
   footage are two people seen at once); otherwise it is a new face.
"""

from __future__ import annotations

import numpy as np

from egodesk.perception.faces import SAME_PERSON


def group(vectors: np.ndarray, cut: float = SAME_PERSON) -> list[int]:
    """A group label (0, 1, ...) for each print (rows of `vectors`), numbered in order of first sighting."""
    count = len(vectors)
    if count == 0:
        return []
    if count == 1:
        return [0]
    from scipy.cluster.hierarchy import fcluster, linkage

    tree = linkage(np.asarray(vectors, np.float64), method="average", metric="euclidean")
    raw = fcluster(tree, t=cut, criterion="distance")
    order: dict[int, int] = {}
    return [order.setdefault(int(label), len(order)) for label in raw]


def match(groups: list[np.ndarray], known: list[np.ndarray], cut: float = SAME_PERSON) -> list[int | None]:
    """For each group centroid, the index of the known centroid it joins, or None (a new face)."""
    pairs = sorted(
        (float(np.linalg.norm(centroid - other)), g, k)
        for g, centroid in enumerate(groups)
        for k, other in enumerate(known)
        if float(np.linalg.norm(centroid - other)) < cut
    )
    found: list[int | None] = [None] * len(groups)
    taken: set[int] = set()
    for _, g, k in pairs:
        if found[g] is None and k not in taken:
            found[g] = k
            taken.add(k)
    return found
