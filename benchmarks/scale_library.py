"""A synthetic library of N hours of footage-equivalent memory, for scale tests (issue 7).

    .venv/bin/python benchmarks/scale_library.py OUT_DIR --hours 200 [--seed N]

Writes a real library into OUT_DIR (the real SQLite schema through `Store`, the real hnswlib indices
built by `IndexManager`) as if N hours of wearable footage had been ingested and every memory builder
had run, without any LLM or video:
- footage of 1-3 h (about 3.5 a day, ~100 for 200 h over ~30 days), video kind, realistic start times,
  every stage's job done; a clip every `clip_seconds` (30 s) with a caption from a template grammar of
  first-person scenes (actions on objects, places, people: "I take the blue mug from the cupboard."),
  and speech in about a quarter of them (transcript segments on topics: "Did you book the dentist?");
- parent-child units exactly as `parent_child` builds them (same keys, digests and subchunk splitting,
  so a rerun of the real builder keeps them all), Imprint records streamed through the real
  `OnlineCompressor` into memory entries, prototypes and their state rows, and EgoCITE atomic
  statements in the four views;
- a keyframe thumbnail for the first clip of each footage and every 40th clip after it (a few, as
  the GUI must cope with clips that have none); every tenth footage's first thumbnail file is missing.

Vectors: embedding ~250k texts with MiniLM (~150/s here) would take half an hour, so the vocabulary
of phrase pieces (action-object pairs, actions, objects, places, people, scene names, utterances,
context sentences: ~1k) is embedded once with the real embedder and each unit's vector is composed
from its pieces: a normalised weighted sum plus a little noise. Record object/action vectors and the
action-object vectors fed to the compressor are the real embeddings of those strings (the pieces),
exactly as Imprint stores them, and entries get the normalised sums of their members' vectors.
Real question embeddings therefore land near the units that talk about the same things.

Rows go in with explicit ids through Core executemany, one transaction per footage; the indices are
then built from the stored vectors (`IndexManager.rebuild`) and saved. `build` returns (and writes to
OUT_DIR/scale.json) the counts and the seconds each phase took.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import func, insert, select

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings
from egodesk.core.stages import MEMORY_STAGES, VIDEO_STAGES
from egodesk.core.timeutil import from_ts, to_ts
from egodesk.media.keyframes import write_thumbnail
from egodesk.memory import atomic, record_compression
from egodesk.memory.consolidation import CompressionParams, OnlineCompressor
from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import BUILDER as PC_BUILDER
from egodesk.memory.parent_child import split_subchunks
from egodesk.memory.record_tables import BuildProgress, EventPrototype, MemoryEntryState, to_bytes
from egodesk.memory.records import Record
from egodesk.memory.store import Caption, Clip, Footage, IndexInfo, Job, Keyframe, Store, TranscriptSegment, Unit
from egodesk.memory.vectors import normalise, put_vectors

GENERATOR_VERSION = 2  # bump when the library it writes changes: cached copies are rebuilt
MARKER = "scale.json"
DAY0 = datetime(2024, 2, 5)
SLOTS_H = (7.0, 11.0, 15.0, 19.0)  # a footage starts 0-1 h into one of these 4-hour slots
THUMB_EVERY = 40
NOISE = 0.15  # norm of the noise added to a composed vector (before normalising)
WEARER = Settings().wearer_name
# embeddings of single strings, as Imprint stores them
EXACT_SPACES = (record_compression.OBJECT_SPACE, record_compression.ACTION_SPACE)

PEOPLE = ["Tasha", "Jake", "Mel", "Omar", "Lucia", "Priya", "Ben", "Grandma Rose", "Sam", "Nora", "Leo", "Aunt Maria"]
# scene | places | steps "action/object[:attribute,...][@where,...]" | topics people talk about there
SCENES = """
making coffee|kitchen|fill/kettle@at the tap;switch on/kettle;take/mug:blue,white,chipped@from the cupboard;scoop/coffee;pour/hot water@into the mug;stir/coffee@with a spoon;drink/coffee|dentist appointment,weekend plans
making breakfast|kitchen|take/eggs@from the fridge;crack/egg@into the pan;fry/egg;toast/bread;butter/toast;pour/orange juice;eat/breakfast@at the table|school pick-up,weekend plans
cooking dinner|kitchen|chop/onions@on the cutting board;slice/peppers:red,green;fry/chicken@in the pan;boil/rice;taste/sauce;set/table@for three|what to cook,Jake's birthday party
washing the dishes|kitchen|turn on/tap;rinse/plate;scrub/frying pan@with the sponge;wash/glass;dry/plate@with the towel;put away/bowl@in the cupboard|electricity bill,leaking tap
baking bread|kitchen|weigh/flour@on the scale;knead/dough;put/dough@in the oven;take out/loaf@of the oven;slice/loaf|Grandma Rose's visit,what to cook
taking medication|kitchen|open/pill box;take/vitamins;drink/glass of water;put back/pill box@in the drawer|dentist appointment,doctor's advice
doing laundry|bathroom,utility room|empty/laundry basket;load/washing machine;add/detergent;start/washing machine;hang/shirts@on the rack;fold/towels|broken washing machine,moving the sofa
cleaning the bathroom|bathroom|scrub/sink;wipe/mirror@with a cloth;mop/floor;refill/soap dispenser|leaking tap,electricity bill
brushing teeth|bathroom|take/toothbrush;squeeze/toothpaste;brush/teeth;rinse/toothbrush@under the tap|dentist appointment
leaving the house|hallway|put on/jacket:green,black;take/keys@from the hall shelf,from the bowl by the door;take/umbrella:red,blue;lock/front door;put/wallet@in my pocket|weather,car service
coming home|hallway|unlock/front door;hang/jacket@on the hook;put down/keys@on the hall shelf,in the kitchen drawer,on the sofa;take off/shoes;put/backpack@on the chair|weekend plans,school pick-up
working on the laptop|office,living room|open/laptop@on the desk;type/email@to my manager;read/report;join/video call;write/notes@in my notebook;print/document|new job at the bakery,project deadline
reading|living room,bedroom|take/book@from the shelf;read/novel;turn/page;put/bookmark@in the book|book club
tidying up|living room|pick up/toys@from the floor;fold/blanket;vacuum/carpet;empty/bin|moving the sofa,Grandma Rose's visit
watching TV|living room|turn on/TV;take/remote@from the sofa;eat/popcorn;turn off/TV|football match,holiday in Lisbon
playing guitar|living room,bedroom|tune/guitar;play/song;put away/guitar@in its case|concert tickets
feeding the cat|kitchen|open/cat food;fill/cat bowl;refill/water dish;stroke/cat|vet appointment
packing a bag|bedroom|fold/clothes;pack/charger@in the suitcase;put/passport@in the backpack,in the top drawer;zip/suitcase|holiday in Lisbon,train tickets
doing the grocery shopping|supermarket|take/basket@at the entrance;pick/apples;check/price@on the shelf;take/milk@from the fridge;put/bread@in the basket;pay/groceries@at the till|what to cook,electricity bill
picking up a prescription|pharmacy|hand/prescription@to the pharmacist;buy/painkillers;take/receipt|doctor's advice
having lunch at the cafe|cafe|order/sandwich;drink/tea;eat/soup;pay/bill@at the counter|new job at the bakery,holiday in Lisbon
walking in the park|park|throw/ball@for the dog;sit on/bench;take/photo@of the pond;feed/ducks|weather,weekend plans
taking the bus|bus stop,bus|check/timetable;tap/travel card@on the reader;sit on/seat@by the window;press/stop button|train tickets,car service
driving|car|start/car;adjust/mirror;fill/tank@at the petrol station;park/car@behind the station|car service,school pick-up
working out|gym|lift/dumbbells;run on/treadmill;wipe/bench@with a towel;drink/water bottle|football match,project deadline
repairing the bike|garage|pump/tyre;tighten/bolt@with the spanner;oil/chain;take/spanner@from the toolbox|bike ride on Sunday
returning library books|library|return/books@at the desk;borrow/book;scan/library card|book club
watering the plants|garden,balcony|fill/watering can;water/tomatoes;pull/weeds;cut/roses@with the scissors|Grandma Rose's visit,weather
"""
TOPICS = {
    "dentist appointment": [
        "Did you book the dentist for Thursday?",
        "The dentist moved my appointment to half past ten.",
        "I need to call the dentist before noon.",
        "Bring your insurance card to the dentist.",
    ],
    "weekend plans": [
        "What are we doing on Saturday?",
        "Let's go hiking if it does not rain.",
        "I promised Jake we would visit the market.",
        "Sunday is free, we could stay home.",
    ],
    "school pick-up": ["Who is picking up the kids today?", "School finishes early on Friday.", "I can do the pick-up at three."],
    "what to cook": [
        "What should we cook tonight?",
        "We still have rice and some chicken.",
        "How about a curry with the peppers?",
        "We need onions for that.",
    ],
    "Jake's birthday party": [
        "Jake's party is on the twelfth.",
        "Did you order the chocolate cake?",
        "We should invite his cousins too.",
    ],
    "electricity bill": [
        "The electricity bill came today.",
        "It is much higher than last month.",
        "I will pay it online tonight.",
    ],
    "leaking tap": [
        "The tap in the bathroom is leaking again.",
        "I called the plumber about the tap.",
        "The plumber can come on Monday.",
    ],
    "Grandma Rose's visit": [
        "Grandma Rose arrives on Sunday by train.",
        "Can you get the spare room ready for Grandma Rose?",
        "She wants to see the garden.",
    ],
    "doctor's advice": ["The doctor said to take the pills with food.", "I have to go back for a check-up in two weeks."],
    "broken washing machine": [
        "The washing machine stopped in the middle of the cycle.",
        "The repair man comes on Wednesday.",
        "Maybe we should buy a new washing machine.",
    ],
    "moving the sofa": [
        "Help me move the sofa to the window.",
        "The sofa does not fit through the door.",
        "Let's try it tomorrow with Omar.",
    ],
    "car service": [
        "The car needs a service next week.",
        "The garage quoted two hundred euros.",
        "The brakes are making a noise.",
    ],
    "weather": ["It is going to rain all afternoon.", "Take an umbrella, it looks grey.", "The forecast says sun tomorrow."],
    "new job at the bakery": [
        "Lucia starts her new job at the bakery on Monday.",
        "The bakery opens at six in the morning.",
        "She gets free bread every Friday.",
    ],
    "project deadline": [
        "The report is due on Friday.",
        "My manager wants the slides by Wednesday.",
        "I will finish the draft tonight.",
    ],
    "book club": [
        "The book club meets on Tuesday.",
        "We are reading a novel about a lighthouse.",
        "I have not finished the last chapter.",
    ],
    "football match": ["The match starts at eight.", "Our team lost two nil last week.", "Do you want to watch it at the pub?"],
    "holiday in Lisbon": [
        "The flights to Lisbon are booked for May.",
        "I found a small hotel near the river.",
        "We should try the custard tarts.",
    ],
    "concert tickets": ["I got two tickets for the concert in June.", "The concert is at the old theatre."],
    "vet appointment": ["The cat has a vet appointment on Thursday.", "The vet said she needs a vaccine."],
    "train tickets": ["I bought the train tickets online.", "The train leaves at nine fifteen from platform four."],
    "bike ride on Sunday": [
        "Are we still doing the bike ride on Sunday?",
        "The back tyre keeps going flat.",
        "We could ride along the river.",
    ],
}
AMBIENT = [
    "The radio is playing quietly in the background.",
    "Sunlight comes through the window onto the floor.",
    "It is raining outside and the window is streaked.",
    "The room is quiet apart from the clock.",
    "A dog barks somewhere outside on the street.",
    "The lights are dim and it is getting dark.",
    "Music plays from a speaker on the shelf.",
    "My phone buzzes on the table next to me.",
    "The window is open and it is cold.",
    "It smells of fresh bread and coffee.",
    "Traffic noise comes from the street below.",
    "The floor is wet near the door.",
]
PLACE_LINES = ["I am in the {p}.", "I am standing in the {p}.", "I walk into the {p}.", "I am back in the {p}."]
PERSON_LINES = [
    "{p} is standing next to me and talking.",
    "{p} waves at me from across the room.",
    "{p} is looking at a phone by the window.",
    "{p} laughs at something I said.",
    "{p} walks past me carrying a bag.",
]
STEP_LINES = [
    "I {a} the {o}{w}{t}.",
    "I carefully {a} the {o}{w}{t}.",
    "Then I {a} the {o}{w}{t}.",
    "I quickly {a} the {o}{w}{t}.",
    "With my left hand I {a} the {o}{w}.",
]
SPEECH_ACTIONS = {True: "ask about", False: "talk about"}  # a question or not: the speech record's action
STEP_TAILS = ["", "", " with my right hand", " with both hands", " while holding my phone", " and look around"]


class Scene:
    def __init__(self, line: str):
        name, places, steps, topics = line.split("|")
        self.name, self.places, self.topics = name, places.split(","), topics.split(",")
        self.steps: list[tuple[str, list[str], list[str]]] = []  # (action, object variants, where variants)
        for step in steps.split(";"):
            step, _, where = step.partition("@")
            action, obj = step.split("/")
            obj, _, attrs = obj.partition(":")
            self.steps.append(
                (action, [f"{a} {obj}" for a in attrs.split(",")] if attrs else [obj], where.split(",") if where else [""])
            )


SCENE_LIST = [Scene(line) for line in SCENES.strip().splitlines()]


def vocabulary() -> list[str]:
    """Every phrase piece a unit vector is composed from (embedded once per build)."""
    words: set[str] = set(AMBIENT) | set(PEOPLE) | {SPEECH_ACTIONS[True], SPEECH_ACTIONS[False]}
    for scene in SCENE_LIST:
        words |= (
            {scene.name} | {f"the {p}" for p in scene.places} | {line.format(p=p) for line in PLACE_LINES for p in scene.places}
        )
        for action, objects, wheres in scene.steps:
            words |= {action} | set(objects) | {f"{action} {o}" for o in objects} | {w for w in wheres if w}
    for topic, lines in TOPICS.items():
        words |= {topic, *(f"{a} {topic}" for a in SPEECH_ACTIONS.values())} | set(lines)
    words |= {line.format(p=p) for line in PERSON_LINES for p in PEOPLE}
    return sorted(words)


class Composer:
    """Unit vectors from embedded pieces: normalise(sum of weight x piece) + noise, normalised."""

    def __init__(self, embedder, rng: np.random.Generator):
        self.rng = rng
        texts = vocabulary()
        self.vec = dict(zip(texts, embedder.embed_documents(texts).astype(np.float64)))
        self.dim = embedder.dim

    def mix(self, *parts: tuple[str, float]) -> np.ndarray:
        return normalise(sum(w * self.vec[p] for p, w in parts if p))[0].astype(np.float64)

    def compose(self, vectors: list[list[np.ndarray]], noise: bool) -> np.ndarray:
        """One row per unit: the normalised sum of its pieces' vectors, plus noise if asked."""
        matrix = normalise(np.array([np.sum(v, axis=0) for v in vectors]))
        if not noise:
            return matrix
        noise = self.rng.normal(size=matrix.shape)
        return normalise(matrix + NOISE * noise / np.linalg.norm(noise, axis=1, keepdims=True))


class Ids:
    """Explicit primary keys: the library is written by this process alone."""

    def __init__(self):
        self.next: dict[str, int] = {}

    def __call__(self, table: str) -> int:
        self.next[table] = self.next.get(table, 0) + 1
        return self.next[table]


def footage_plan(hours: float, rng: random.Random) -> list[tuple[float, float]]:
    """(start ts, duration s) of each footage: 3-4 a day in separate slots, until `hours` are covered."""
    plan, total, day = [], 0.0, 0
    while total < hours * 3600:
        for slot in sorted(rng.sample(SLOTS_H, rng.choice((3, 4)))):
            if total >= hours * 3600:
                break
            duration = min(rng.uniform(1.0, 3.0), hours - total / 3600) * 3600
            duration = max(60.0, round(duration / 30) * 30)
            start = DAY0 + timedelta(days=day, hours=slot + rng.uniform(0, 0.9))
            plan.append((to_ts(start.replace(microsecond=0)), duration))
            total += duration
        day += 1
    return plan


class FootageWriter:
    """Generates and writes one footage: media rows, parent-child units, records, atomic statements."""

    def __init__(self, paths: LibraryPaths, composer: Composer, ids: Ids, rng: random.Random, clip_seconds: float):
        self.paths, self.c, self.ids, self.rng, self.clip_seconds = paths, composer, ids, rng, clip_seconds
        settings = Settings()
        self.params, self.max_chars = CompressionParams.from_settings(settings), settings.subchunk_max_chars

    def write(self, store: Store, number: int, start: float, duration: float) -> None:
        ids = self.ids
        fid = ids("footage")
        stamp = from_ts(start)
        title = f"GX{number:06d}"
        self.rows: dict[str, list[dict]] = {
            name: [] for name in ("clip", "keyframe", "caption", "segment", "parents", "children", "entries", "records", "atomic")
        }
        self.vectors: dict[str, tuple[list[int], list[np.ndarray]]] = {}
        footage = {
            "id": fid,
            "content_hash": hashlib.sha256(f"scale-{number}".encode()).hexdigest(),
            "kind": "video",
            "path": f"/media/wearable/{stamp:%Y-%m-%d}/{title}.MP4",
            "title": title,
            "start_ts": start,
            "start_source": "metadata",
            "duration": duration,
            "fps": 29.97,
            "width": 1920,
            "height": 1080,
            "has_audio": True,
        }
        clips = self._clips(fid, start, duration, thumbs=number % 10 != 0)  # every tenth footage's cover file is missing
        self._records(fid, clips)
        self._atomic(fid, clips)
        with store.session() as s:
            s.execute(insert(Footage.__table__), [footage])
            s.execute(
                insert(Job.__table__),
                [{"footage_id": fid, "stage": st, "state": "done", "done": 1, "total": 1} for st in VIDEO_STAGES + MEMORY_STAGES],
            )
            for table, key in (
                (Clip, "clip"),
                (Keyframe, "keyframe"),
                (Caption, "caption"),
                (TranscriptSegment, "segment"),
                (Unit, "parents"),
                (Unit, "children"),
                (Unit, "entries"),
                (Unit, "records"),
                (Unit, "atomic"),
            ):
                if self.rows[key]:
                    s.execute(insert(table.__table__), self.rows[key])
            for space, (unit_ids, vectors) in self.vectors.items():
                put_vectors(s, space, unit_ids, self.c.compose(vectors, noise=space not in EXACT_SPACES))
            self._compression_state(s, fid, clips)

    def _unit(self, key: str, space: str | None, vector: list[np.ndarray] | None, **row) -> int:
        uid = self.ids("unit")
        self.rows[key].append({"id": uid, "parent_id": None, "view": "", "meta": None, **row})
        if space is not None:
            ids, vectors = self.vectors.setdefault(space, ([], []))
            ids.append(uid)
            vectors.append(vector)
        return uid

    def _clips(self, fid: int, start: float, duration: float, thumbs: bool) -> list[dict]:
        rng, c = self.rng, self.c
        clips, scene, left, step = [], None, 0, 0
        for idx in range(int(duration // self.clip_seconds)):
            if left == 0:  # a new scene: what, where, with whom, about what
                scene, left, step = rng.choice(SCENE_LIST), rng.randint(4, 20), 0
                place = rng.choice(scene.places)
                people = rng.sample(PEOPLE, rng.choice((0, 0, 1, 1, 2)))
                topic = rng.choice(scene.topics) if people and rng.random() < 0.7 else None
                new_scene = True
            left -= 1
            t0 = start + idx * self.clip_seconds
            clip = {
                "id": self.ids("clip"),
                "footage_id": fid,
                "idx": idx,
                "offset": idx * self.clip_seconds,
                "start_ts": t0,
                "end_ts": t0 + self.clip_seconds,
                "scene": scene,
                "place": place,
                "people": people,
                "topic": topic,
                "steps": [],
                "lines": [],
            }
            atoms: list[tuple[str, list]] = []  # (sentence, its piece vectors)
            if new_scene or rng.random() < 0.5:
                line = rng.choice(PLACE_LINES).format(p=place)
                atoms.append((line, [c.vec[line]]))
            for _ in range(rng.choice((1, 1, 2))):
                action, objects, wheres = scene.steps[step % len(scene.steps)]
                step += 1
                obj, where = rng.choice(objects), rng.choice(wheres)
                clip["steps"].append((action, obj, where))
                text = rng.choice(STEP_LINES).format(a=action, o=obj, w=f" {where}" if where else "", t=rng.choice(STEP_TAILS))
                atoms.append((text, [c.mix((f"{action} {obj}", 1.0), (where, 0.4), (f"the {place}", 0.3))]))
            if people and rng.random() < 0.5:
                line = rng.choice(PERSON_LINES).format(p=rng.choice(people))
                atoms.append((line, [c.vec[line]]))
            if rng.random() < 0.5:
                line = rng.choice(AMBIENT)
                atoms.append((line, [c.vec[line]]))
            new_scene = False
            self.rows["clip"].append({k: clip[k] for k in ("id", "footage_id", "idx", "offset", "start_ts", "end_ts")})
            self._parent(fid, clip, "caption", atoms, clip["start_ts"], clip["end_ts"])
            if topic and rng.random() < 0.6:
                self._speech(fid, clip)
            if idx % THUMB_EVERY == 0:
                self._keyframe(fid, clip, write=thumbs or idx > 0)
            clips.append(clip)
        return clips

    def _speech(self, fid: int, clip: dict) -> None:
        c, rng = self.c, self.rng
        lines = TOPICS[clip["topic"]]
        atoms, t = [], clip["start_ts"] + rng.uniform(0, 5)
        for _ in range(rng.randint(1, 3)):
            speaker = rng.choice([*clip["people"], ""])  # "" is the wearer (speech recognition names no one)
            text, length = rng.choice(lines), rng.uniform(2, 7)
            if t + length > clip["end_ts"]:
                break
            clip["lines"].append((speaker, text))
            self.rows["segment"].append(
                {
                    "id": self.ids("segment"),
                    "footage_id": fid,
                    "clip_id": clip["id"],
                    "idx": len(self.rows["segment"]),
                    "start_ts": t,
                    "end_ts": t + length,
                    "text": text,
                    "language": "en",
                    "speaker": speaker,
                }
            )
            atoms.append((f"{speaker}: {text}" if speaker else text, [c.mix((text, 1.0), (speaker, 0.3))]))
            t += length + rng.uniform(0.5, 3)
        if atoms:
            segments = self.rows["segment"][-len(atoms) :]
            self._parent(fid, clip, "transcript", atoms, segments[0]["start_ts"], segments[-1]["end_ts"])

    def _parent(self, fid: int, clip: dict, kind: str, atoms: list[tuple[str, list]], start: float, end: float) -> None:
        """A caption or transcript parent and its subchunks, keyed and split as `parent_child` does."""
        text = (" " if kind == "caption" else "\n").join(a for a, _ in atoms)
        if kind == "caption":
            caption_id = self.ids("caption")
            self.rows["caption"].append(
                {
                    "id": caption_id,
                    "clip_id": clip["id"],
                    "footage_id": fid,
                    "start_ts": start,
                    "end_ts": end,
                    "text": text,
                    "captioner": "vlm",
                    "kind": "caption",
                }
            )
            key = f"caption:{caption_id}"
        else:
            key = f"transcript:clip{clip['id']}"
        whole = [v for _, vs in atoms for v in vs]
        digest = hashlib.sha1(f"{start}|{end}|{text}".encode()).hexdigest()
        parent = self._unit(
            "parents",
            kind,
            whole,
            footage_id=fid,
            clip_id=clip["id"],
            kind=kind,
            start_ts=start,
            end_ts=end,
            text=text,
            builder=PC_BUILDER,
            meta={"key": key, "digest": digest},
        )
        remaining = list(atoms)
        for j, piece in enumerate(split_subchunks(text, self.max_chars)):
            vectors, rest = [], piece
            while remaining and rest.startswith(remaining[0][0]):  # the whole sentences this piece holds
                rest = rest[len(remaining[0][0]) :].lstrip()
                vectors += remaining.pop(0)[1]
            self._unit(
                "children",
                "subchunk",
                vectors if vectors and not rest else whole,
                footage_id=fid,
                clip_id=clip["id"],
                parent_id=parent,
                kind="subchunk",
                start_ts=start,
                end_ts=end,
                text=piece,
                builder=PC_BUILDER,
                meta={"index": j},
            )

    def _keyframe(self, fid: int, clip: dict, write: bool) -> None:
        thumb = self.paths.thumbnails / str(fid) / f"{clip['idx']:05d}_0.jpg"
        hue = int(hashlib.md5(clip["scene"].name.encode()).hexdigest()[:6], 16)
        frame = np.zeros((180, 320, 3), dtype=np.uint8) + np.array([hue & 255, hue >> 8 & 255, hue >> 16 & 255], dtype=np.uint8)
        frame[:, :, 1] = np.linspace(0, 255, 320, dtype=np.uint8)[None, :] // 2 + frame[:, :, 1] // 2
        if write:
            write_thumbnail(frame, thumb)
        self.rows["keyframe"].append(
            {
                "id": self.ids("keyframe"),
                "clip_id": clip["id"],
                "idx": 0,
                "offset": clip["offset"] + 1.0,
                "ts": clip["start_ts"] + 1.0,
                "thumb_path": str(thumb),
            }
        )

    def _records(self, fid: int, clips: list[dict]) -> None:
        """Imprint's records of every clip, streamed through the real compressor into memory entries."""
        c = self.c
        self.compressor = OnlineCompressor(self.params, c.dim)
        entries: dict[int, dict] = {}
        for clip in clips:
            found = [
                Record(
                    clip["id"],
                    clip["start_ts"],
                    clip["end_ts"],
                    [WEARER, *clip["people"][:1]],
                    a,
                    o,
                    location=clip["place"],
                    attributes=[],
                )
                for a, o, _ in clip["steps"]
            ]
            found += [
                Record(
                    clip["id"],
                    clip["start_ts"],
                    clip["end_ts"],
                    [speaker or WEARER],
                    SPEECH_ACTIONS[text.endswith("?")],
                    clip["topic"],
                    speech=text,
                )
                for speaker, text in clip["lines"][:1]
            ]
            for record in found:
                d = self.compressor.step(c.vec[f"{record.action} {record.object}"], record.start)
                uid = self._unit(
                    "records",
                    None,
                    None,
                    footage_id=fid,
                    clip_id=record.clip_id,
                    kind=record_compression.RECORD,
                    start_ts=record.start,
                    end_ts=record.end,
                    text=record.sentence(),
                    builder=record_compression.BUILDER,
                )
                row = self.rows["records"][-1]
                row["meta"] = record_compression.record_meta(record, d, len(self.rows["records"]))
                for space, text in (
                    (record_compression.OBJECT_SPACE, record.object),
                    (record_compression.ACTION_SPACE, record.action),
                ):
                    ids, vectors = self.vectors.setdefault(space, ([], []))
                    ids.append(uid)
                    vectors.append([c.vec[text]])
                if d.entry >= 0:
                    entry = entries.setdefault(
                        d.entry, {"members": [], "rows": {}, "object": np.zeros(c.dim), "action": np.zeros(c.dim)}
                    )
                    entry["members"].append(
                        {
                            "record": uid,
                            "clip": record.clip_id,
                            "start": record.start,
                            "end": record.end,
                            "text": row["text"],
                            "importance": round(d.importance, 6),
                        }
                    )
                    entry["object"] = entry["object"] + c.vec[record.object]
                    entry["action"] = entry["action"] + c.vec[record.action]
                    entry["rows"][uid] = row
        self.entries = []
        for seq in sorted(entries):
            e = entries[seq]
            members = e["members"]
            uid = self.ids("unit")
            meta = {
                "seq": seq,
                "members": members,
                "count": len(members),
                "importance": round(float(np.mean([m["importance"] for m in members])), 6),
            }
            self.rows["entries"].append(
                {
                    "id": uid,
                    "parent_id": None,
                    "view": "",
                    "footage_id": fid,
                    "clip_id": members[0]["clip"],
                    "kind": record_compression.ENTRY,
                    "start_ts": min(m["start"] for m in members),
                    "end_ts": max(m["end"] for m in members),
                    "builder": record_compression.BUILDER,
                    "meta": meta,
                    "text": "; ".join(dict.fromkeys(m["text"] for m in members)),
                }
            )
            for m in members:
                e["rows"][m["record"]]["parent_id"] = e["rows"][m["record"]]["meta"]["entry"] = uid
            for space, key in ((record_compression.OBJECT_SPACE, "object"), (record_compression.ACTION_SPACE, "action")):
                ids, vectors = self.vectors.setdefault(space, ([], []))
                ids.append(uid)
                vectors.append([normalise(e[key])[0]])
            self.entries.append((uid, seq, e))

    def _compression_state(self, s, fid: int, clips: list[dict]) -> None:
        comp = self.compressor
        protos = comp.prototypes
        s.execute(
            insert(EventPrototype.__table__),
            [
                {
                    "id": self.ids("prototype"),
                    "footage_id": fid,
                    "seq": i,
                    "context_sum": to_bytes(protos.sums[i]),
                    "count": protos.counts[i],
                    "last_seen": protos.last_seen[i],
                }
                for i in range(len(protos))
            ],
        )
        if self.entries:
            s.execute(
                insert(MemoryEntryState.__table__),
                [
                    {
                        "unit_id": uid,
                        "footage_id": fid,
                        "seq": seq,
                        "event_sum": to_bytes(comp.entries.event_sums[seq]),
                        "context_sum": to_bytes(comp.entries.context_sums[seq]),
                        "object_sum": to_bytes(e["object"]),
                        "action_sum": to_bytes(e["action"]),
                        "count": comp.entries.counts[seq],
                    }
                    for uid, seq, e in self.entries
                ],
            )
        last = clips[-1]["idx"] if clips else -1
        s.execute(
            insert(BuildProgress.__table__),
            [
                {
                    "footage_id": fid,
                    "builder": record_compression.BUILDER,
                    "last_idx": last,
                    "batches": -(-len(clips) // 12),
                    "state": to_bytes(comp.history_matrix()),
                },
                {"footage_id": fid, "builder": atomic.BUILDER, "last_idx": last, "batches": -(-len(clips) // 4), "state": None},
            ],
        )

    def _atomic(self, fid: int, clips: list[dict]) -> None:
        """EgoCITE's statements per batch of 4 clips: actions and utterances per clip, the batch's
        activity and conversation per scene."""
        c = self.c
        for first in range(0, len(clips), 4):
            batch = clips[first : first + 4]
            for clip in batch:
                for action, obj, where in clip["steps"]:
                    text = f"I {action} the {obj}{' ' + where if where else ''} in the {clip['place']}."
                    self._statement(
                        fid,
                        [clip],
                        "action",
                        text,
                        [c.mix((f"{action} {obj}", 1.0), (where, 0.4), (f"the {clip['place']}", 0.3))],
                    )
                for speaker, line in clip["lines"]:
                    who = f"{speaker} tells me" if speaker else f"I tell {clip['people'][0]}"
                    text = f'{who} about the {clip["topic"]}: "{line}"'
                    self._statement(fid, [clip], "utterance", text, [c.mix((line, 1.0), (clip["topic"], 0.4), (speaker, 0.3))])
            for scene in dict.fromkeys(cl["scene"] for cl in batch):
                group = [cl for cl in batch if cl["scene"] is scene]
                people, place = group[0]["people"], group[0]["place"]
                with_whom = f" with {' and '.join(people)}" if people else ""
                self._statement(
                    fid,
                    group,
                    "activity",
                    f"I am {scene.name} in the {place}{with_whom}.",
                    [c.mix((scene.name, 1.0), (f"the {place}", 0.4), *((p, 0.3) for p in people))],
                )
                talk = [cl for cl in group if cl["lines"]]
                if talk:
                    self._statement(
                        fid,
                        talk,
                        "conversation",
                        f"{' and '.join(people)} and I talk about the {talk[0]['topic']} in the {place}.",
                        [c.mix((talk[0]["topic"], 1.0), (f"the {place}", 0.3), *((p, 0.3) for p in people))],
                    )

    def _statement(self, fid: int, clips: list[dict], view: str, text: str, vectors: list[np.ndarray]) -> None:
        self._unit(
            "atomic",
            atomic.space(view),
            vectors,
            footage_id=fid,
            clip_id=clips[0]["id"],
            kind=atomic.KIND,
            view=view,
            start_ts=clips[0]["start_ts"],
            end_ts=clips[-1]["end_ts"],
            text=text[: atomic.MAX_CHARS],
            builder=atomic.BUILDER,
            meta={"clips": [cl["id"] for cl in clips]},
        )


def summary(store: Store) -> dict:
    """Footage hours and unit counts per kind (and view) of a library."""
    with store.session() as s:
        footage, seconds = s.execute(select(func.count(Footage.id), func.coalesce(func.sum(Footage.duration), 0.0))).one()
        kinds = {
            f"{k}:{v}" if v else k: n
            for k, v, n in s.execute(select(Unit.kind, Unit.view, func.count()).group_by(Unit.kind, Unit.view))
        }
        prototypes = s.scalar(select(func.count(EventPrototype.id)))
        keyframes = s.scalar(select(func.count(Keyframe.id)))
        clips = s.scalar(select(func.count(Clip.id)))
    return {
        "footage": footage,
        "hours": round(seconds / 3600, 2),
        "clips": clips,
        "keyframes": keyframes,
        "prototypes": prototypes,
        "units": sum(kinds.values()),
        "units_per_kind": dict(sorted(kinds.items())),
    }


def build(root: Path, hours: float = 200.0, seed: int = 0, clip_seconds: float = 30.0, embedder=None, log=print) -> dict:
    """Write the library into `root` (which must hold no library yet); returns the report, also saved
    as root/scale.json (written last: its presence marks a complete library)."""
    paths = LibraryPaths.at(root)
    if paths.database.exists():
        raise FileExistsError(f"{paths.database} exists: give an empty or new folder")
    paths.ensure()
    started = time.perf_counter()
    if embedder is None:
        from egodesk.perception.embedder import make_embedder

        embedder = make_embedder(threads=2)
    composer = Composer(embedder, np.random.default_rng(seed))
    embed_s = time.perf_counter() - started
    log(f"embedded {len(composer.vec)} vocabulary pieces in {embed_s:.1f} s")
    store = Store(paths.database)
    with store.session() as s:
        s.execute(
            insert(IndexInfo.__table__),
            [
                {
                    "name": space,
                    "dim": composer.dim,
                    "metric": "cosine",
                    "model_id": embedder.model_id,
                    "count": 0,
                    "file": "",
                    "sha256": "",
                }
                for space in spaces()
            ],
        )
    rng, ids = random.Random(seed), Ids()
    writer = FootageWriter(paths, composer, ids, rng, clip_seconds)
    plan = footage_plan(hours, rng)
    generated = time.perf_counter()
    for number, (start, duration) in enumerate(plan, start=1):
        writer.write(store, number, start, duration)
        if number % 10 == 0 or number == len(plan):
            log(f"footage {number}/{len(plan)} written ({time.perf_counter() - generated:.0f} s)")
    generate_s = time.perf_counter() - generated
    indexed = time.perf_counter()
    manager = IndexManager(store, paths.indices)
    counts = {space: manager.rebuild(space) for space in spaces()}
    index_s = time.perf_counter() - indexed
    log(f"indices built in {index_s:.1f} s: {counts}")
    report = {
        "generator_version": GENERATOR_VERSION,
        "hours_asked": hours,
        "seed": seed,
        "clip_seconds": clip_seconds,
        **summary(store),
        "vectors_per_space": counts,
        "vocabulary": len(composer.vec),
        "embed_s": round(embed_s, 1),
        "generate_s": round(generate_s, 1),
        "index_s": round(index_s, 1),
        "total_s": round(time.perf_counter() - started, 1),
        "bytes": sum(p.stat().st_size for p in paths.root.rglob("*") if p.is_file()),
    }
    store.close()
    (paths.root / MARKER).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


def spaces() -> list[str]:
    return [
        "caption",
        "transcript",
        "subchunk",
        record_compression.OBJECT_SPACE,
        record_compression.ACTION_SPACE,
        *(atomic.space(v) for v in atomic.VIEWS),
    ]


def cache_key(hours: float, seed: int, clip_seconds: float = 30.0) -> str:
    """Names a cached library: changes with the parameters and with GENERATOR_VERSION."""
    return hashlib.sha1(json.dumps([GENERATOR_VERSION, float(hours), int(seed), float(clip_seconds)]).encode()).hexdigest()[:12]


# The first question routes through `auto` to `context`, the second to `timeaware` ("last time").
COLD_QUESTIONS = ["Where did I leave the keys?", "When was the last time I took the red umbrella?"]
WARM_QUESTIONS = [
    "What did Lucia say about her new job at the bakery?",
    "Who talked about the dentist appointment?",
    "What did I cook with the red peppers?",
    "Did I water the tomatoes in the garden?",
    "Where did I put my passport?",
    "What did the garage say about the car service?",
    "When did I last feed the cat?",
    "What did I do right after I locked the front door?",
    "What did I eat yesterday afternoon?",
    "How often do I go to the gym?",
    "What did Omar say about moving the sofa?",
    "Where is the blue mug?",
]


def question_latency(root: Path, cold: list[str] = COLD_QUESTIONS, warm: list[str] = WARM_QUESTIONS) -> dict:
    """Seconds to the evidence of each question, as `Library.ask` gets it (retrieval with the
    library's default strategy, then evidence offsets) but without the LLM: neither loaded nor asked.
    The first cold question's time starts before the library is opened, so it includes opening it,
    loading the embedder, the catalog and the indices it needs (not importing the modules: process
    start-up is the same for any library); each later cold question is the first
    of its strategy. Asked an hour after the last footage ends. Each run reports wall and CPU seconds
    (CPU: what the wall time would be on an idle machine, short of disk waits)."""
    import bm25s  # noqa: F401 - imported up front: start-up costs the same for any library size
    import hnswlib  # noqa: F401
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401

    from egodesk.pipeline.library import Library
    from egodesk.retrieval.base import Memory, Query
    from egodesk.retrieval.registry import make_strategy

    started, cpu_started = time.perf_counter(), time.process_time()
    library = Library(root)
    engines = library.engines
    memory = Memory(
        library.store, engines.index_manager, engines.embedder, settings=library.settings
    )  # Library.memory minus the LLM
    with library.store.session() as s:
        asked_at = s.scalar(select(func.max(Footage.start_ts + Footage.duration))) + 3600.0

    def ask(question: str) -> dict:
        began, cpu = time.perf_counter(), time.process_time()
        evidence = make_strategy(library.settings.strategy, memory).retrieve(
            Query(question, None, asked_at, None, library.settings.top_k, cutoff=asked_at)
        )
        starts = {f.id: f.start for f in library.footage()}
        for ev in evidence:
            ev.offset = ev.start - starts[ev.footage_id]
        return {
            "question": question,
            "seconds": round(time.perf_counter() - began, 3),
            "cpu_s": round(time.process_time() - cpu, 3),
            "strategy": evidence[0].strategy if evidence else "",
            "evidence": [ev.text for ev in evidence],
        }

    first = ask(cold[0])
    first["seconds"], first["cpu_s"] = round(time.perf_counter() - started, 3), round(time.process_time() - cpu_started, 3)
    cold_runs = [first, *(ask(q) for q in cold[1:])]
    warm_runs = [ask(q) for q in warm]
    seconds = sorted(r["seconds"] for r in warm_runs)
    library.close()
    return {"cold": cold_runs, "warm": warm_runs, "warm_p50": seconds[len(seconds) // 2], "warm_max": seconds[-1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="a new or empty folder for the library")
    parser.add_argument("--hours", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--clip-seconds", type=float, default=30.0)
    parser.add_argument("--ask", action="store_true", help="then time questions on it (no LLM); reuses a complete OUT_DIR")
    args = parser.parse_args(argv)
    if args.ask and (args.out_dir / MARKER).exists():
        report = json.loads((args.out_dir / MARKER).read_text(encoding="utf-8"))
    else:
        try:
            report = build(args.out_dir, args.hours, args.seed, args.clip_seconds, log=lambda m: print(m, file=sys.stderr))
        except FileExistsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.ask:
        report["questions"] = question_latency(args.out_dir)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
