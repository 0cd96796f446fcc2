"""Name a test day's voices as a person does in the People panel: listen to each voice's samples, say
which is theirs ("This is me"), name the people they recognise, merge a person heard as two voices.

The person is simulated from the day's script: a voice's samples (`Library.voice_samples`, the three
longest turns the panel plays) are heard as whoever the script says spoke longest in them. A voice that
sounds like nobody met (café babble, a voice in a noisy street) is left unnamed, as a person would leave
it. Nothing else of the ground truth reaches the library: lines keep the voices the diarizer gave them,
so a wrong turn stays wrong after naming.
"""

from __future__ import annotations

from dataclasses import dataclass

from egodesk.core.timeutil import to_ts
from egodesk.pipeline.library import Library

from .make_day import Recording
from .speakers import WEARER, turns_of

NOBODY = "other"  # the script's background talkers: a person does not name them


@dataclass
class Named:
    voice: int
    heard_as: str | None  # the person its samples sound like; None: nobody the wearer knows
    action: str  # "me", "named", "merged into N", "left"


def heard_as(samples: list[tuple[int, float, float]], spoken: dict[int, list[tuple[str, float, float]]]) -> str | None:
    """The person who speaks longest in a voice's samples (wall-clock spans in footage ids)."""
    heard: dict[str, float] = {}
    for footage_id, start, end in samples:
        for person, a, b in spoken.get(footage_id, []):
            overlap = min(b, end) - max(a, start)
            if overlap > 0:
                heard[person] = heard.get(person, 0.0) + overlap
    best = max(heard, key=lambda p: heard[p]) if heard else None
    return None if best in (None, NOBODY) else best


def name_voices(library: Library, plan: tuple[Recording, ...]) -> list[Named]:
    """Claim the wearer's voice, name the others by the people they sound like, merge repeats."""
    by_title = {f.title: f.id for f in library.footage()}
    truth = turns_of(plan)
    spoken: dict[int, list[tuple[str, float, float]]] = {}
    for recording in plan:
        origin = to_ts(recording.start)
        footage_id = by_title.get(recording.name)
        if footage_id is not None:
            spoken[footage_id] = [(t.speaker, origin + t.start, origin + t.end) for t in truth[recording.name]]
    out: list[Named] = []
    first: dict[str, int] = {}  # person -> the voice that got their name first
    for voice, samples in sorted(library.voice_samples().items()):
        person = heard_as(samples, spoken)
        if person is None:
            out.append(Named(voice, None, "left"))
        elif person in first:
            library.merge_voices(first[person], voice)
            out.append(Named(voice, person, f"merged into {first[person]}"))
        else:
            first[person] = voice
            if person == WEARER:
                library.claim_voice(voice)
                out.append(Named(voice, person, "me"))
            else:
                library.name_voice(voice, person.capitalize() if person.islower() else person)
                out.append(Named(voice, person, "named"))
    library.refresh_memories()  # as the People panel's next task does
    return out
