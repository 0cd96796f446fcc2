"""Generate the two-day test library: real H.264/AAC camera files a wearer could have recorded.

    cd benchmarks && ../.venv/bin/python -m testday.make_day [--day clean|real] [OUT_DIR]
                                              # default ~/.cache/egodesk/testday/<plan digest>/

The day plan (`DAY`) is the single description of what happens; `questions.jsonl` beside this file
annotates moments of it. Pictures come from the real first-person walk in `../shared/media` and from
the photos scikit-image ships inside its wheel (a cat, coffee, a rocket, ...), shown with a slow,
slightly shaky pan as a head-worn camera would; signs, notes and whiteboards are drawn with Pillow
(DejaVu fonts) so the OCR has real text to read; people talk through espeak-ng voices. Start times are
in the file names (`20261117_073000.mp4`), and one GoPro-named file carries its start only as container
creation_time, the two ways the importer dates a recording (egodesk/media/starttime.py).

Deterministic: fixed seeds, single-threaded bit-exact encoding, no encoder version strings, so a rerun
on the same machine writes the same bytes. Idempotent: a file already there is kept (written to a
temporary name first, so a killed run leaves no half file under the final name).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import shutil
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import platformdirs
from PIL import Image, ImageDraw, ImageFont

from . import realism

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WALK_VIDEO = REPO.parent / "shared" / "media" / "gopro_max-heromode.mp4"
QUESTIONS = HERE / "questions.jsonl"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")  # Debian fonts-dejavu-core

WIDTH, HEIGHT, FPS = 848, 480, 30  # the walk video's frame size; 30 fps like a wearable camera
RATE = 22050  # espeak-ng's sample rate; the track is mixed at it and encoded to AAC

# The clean day's voices (espeak-ng voice+variant): the wearer and the people they meet. A variant is
# written on "en", not "en-gb": espeak-ng 1.51 ignores a variant after "en-gb" without a word and speaks the
# wearer's own voice.
WEARER, MARIA, TOM, PRIYA, BARISTA = "en-gb", "en+f4", "en-us+m3", "en+f2", "en-gb-x-rp"
# The clean day speaks slower than espeak-ng's default (175 words a minute) with short gaps between
# words, so that Whisper hears what is said (at the default it heard "late" as "right", "Tom" as "time").
# The real day (real_day.py) speaks at people's rates instead, through rooms and noise.
SPEECH = ("-s", "135", "-g", "3")
VOICE_NAMES = {WEARER: "wearer", MARIA: "Maria", TOM: "Tom", PRIYA: "Priya", BARISTA: "barista"}


@dataclass(frozen=True)
class Voice:
    """A person of the real day: an espeak-ng voice at a speaking rate (words a minute), heard through
    a room (realism.ROOMS: near for the wearer, room, far, phone)."""

    name: str
    espeak: str
    rate: int = 175
    room: str = "near"

    def args(self) -> tuple[str, ...]:
        return ("-s", str(self.rate))


@dataclass(frozen=True)
class Look:
    """How badly a scene is filmed: `light` (1 = well lit), `blur` (motion blur in pixels), `cut` (the
    share of the picture out of view at its left edge)."""

    light: float = 1.0
    blur: int = 0
    cut: float = 0.0


@dataclass(frozen=True)
class Walk:
    """The real walk footage from `start` seconds on (slowed down, optionally mirrored), with an
    optional street sign held in view."""

    start: float = 0.0
    mirror: bool = False
    sign: tuple[str, ...] = ()


@dataclass(frozen=True)
class Photo:
    """A scikit-image bundled photo (skimage.data name) looked at for the whole scene."""

    name: str


@dataclass(frozen=True)
class Board:
    """Text on a surface (sticky note, bus display, whiteboard, menu): lines, ink and paper colours."""

    lines: tuple[str, ...]
    ink: tuple[int, int, int] = (20, 20, 20)
    paper: tuple[int, int, int] = (245, 245, 240)
    wall: tuple[int, int, int] = (150, 130, 110)


@dataclass(frozen=True)
class Scene:
    seconds: float
    picture: Walk | Photo | Board
    speech: tuple[tuple[float, str | Voice, str], ...] = ()  # (seconds into the scene, voice, words)
    noise: str = ""  # the place's sound (realism.NOISES); the clean day has room tone alone
    snr_db: float = 20.0  # the speech's level above `noise`
    look: Look = Look()


@dataclass(frozen=True)
class Recording:
    name: str  # file stem; the footage title egodesk gives it
    start: datetime  # local wall-clock start
    scenes: tuple[Scene, ...]
    dated_by: str = "filename"  # or "metadata": a GoPro counter name with creation_time inside

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.scenes)

    @property
    def end(self) -> datetime:
        return self.start + timedelta(seconds=self.seconds)


def _at(day: int, hh: int, mm: int) -> datetime:
    return datetime(2026, 11, 16 + day, hh, mm)  # day 1 = Tuesday 17 November 2026, day 2 = Wednesday


DAY: tuple[Recording, ...] = (
    Recording(
        "20261117_073000",
        _at(1, 7, 30),
        (
            Scene(
                15,
                Photo("coffee"),
                ((1.5, MARIA, "Good morning! I made you a coffee."), (7.5, WEARER, "Thank you Maria. Have you seen my keys?")),
            ),
            Scene(
                15,
                Board(("BUY MILK", "AND EGGS"), paper=(250, 235, 120), wall=(210, 210, 205)),
                (
                    (1.0, MARIA, "Tom said the keys are in the bowl by the kitchen window."),
                    (8.0, WEARER, "Great. I will buy milk after work."),
                ),
            ),
        ),
    ),
    Recording(
        "20261117_081500",
        _at(1, 8, 15),
        (
            Scene(15, Walk(0.0), ((3.0, WEARER, "Hi Tom!"), (6.0, TOM, "Good morning. The number forty two bus is late again."))),
            Scene(
                15,
                Board(("BUS 42  CITY CENTRE", "NEXT 08:24"), ink=(255, 170, 0), paper=(15, 15, 15), wall=(120, 140, 150)),
                ((2.0, TOM, "I have to be at the station at nine o'clock."), (9.0, WEARER, "See you tonight, Tom.")),
            ),
        ),
    ),
    Recording(
        "20261117_123000",
        _at(1, 12, 30),
        (
            Scene(15, Board(("SCIENCE MUSEUM", "SPACE HALL", "OPEN 10-18"), ink=(255, 255, 255), paper=(30, 60, 140))),
            Scene(
                15,
                Photo("rocket"),
                ((1.0, WEARER, "Priya, look at this rocket."), (5.0, PRIYA, "The sign says it flew in nineteen sixty nine.")),
            ),
            Scene(15, Photo("astronaut"), ((2.0, PRIYA, "I will buy the astronaut poster for my son."),)),
        ),
    ),
    Recording(
        "GX010042",
        _at(1, 18, 5),
        (
            Scene(15, Photo("chelsea")),  # the cat: nobody mentions it, only the picture shows it
            Scene(
                15,
                Board(("PLUMBER", "FRIDAY 9:30"), paper=(255, 255, 255), wall=(160, 110, 70)),
                ((3.0, MARIA, "Did you buy the milk?"), (7.0, WEARER, "Yes, two litres.")),
            ),
        ),
        dated_by="metadata",
    ),
    Recording(
        "20261118_073500",
        _at(2, 7, 35),
        (
            Scene(
                15,
                Board(("WEDNESDAY", "RECYCLING DAY"), paper=(180, 230, 180), wall=(210, 210, 205)),
                (
                    (2.0, WEARER, "I put my keys on the shelf by the front door."),
                    (8.0, MARIA, "Do not forget, it is recycling day today."),
                ),
            ),
            Scene(15, Walk(2.0, mirror=True), ((3.0, WEARER, "Now I am walking to the train station."),)),
        ),
    ),
    Recording(
        "20261118_100500",
        _at(2, 10, 5),
        (
            Scene(
                15,
                Board(("PROJECT ATLAS", "DEADLINE: FRIDAY 4 PM", "ROOM 214"), ink=(20, 40, 160)),
                ((2.0, PRIYA, "Hi Tom, thanks for coming."), (6.0, TOM, "Hi Priya. Hello everyone.")),
            ),
            Scene(
                15,
                Board(("PROJECT ATLAS", "DEADLINE: FRIDAY 4 PM", "ROOM 214"), ink=(20, 40, 160), wall=(170, 170, 160)),
                ((1.0, TOM, "The budget is twelve thousand euros."), (8.0, PRIYA, "Let us meet again on Monday at ten.")),
            ),
        ),
    ),
    Recording(
        "20261118_124500",
        _at(2, 12, 45),
        (
            Scene(
                15,
                Photo("coffee"),
                ((2.0, WEARER, "One cappuccino, please."), (6.0, BARISTA, "That will be three euros fifty, please.")),
            ),
            Scene(
                15,
                Board(
                    ("CAFE LUNA", "CAPPUCCINO 3.50", "SOUP OF THE DAY: TOMATO"),
                    ink=(240, 240, 240),
                    paper=(40, 70, 50),
                    wall=(120, 90, 60),
                ),
            ),
        ),
    ),
    Recording(
        "20261118_173000",
        _at(2, 17, 30),
        (
            Scene(
                15,
                Walk(4.0, sign=("MAPLE STREET",)),
                ((3.0, TOM, "Hey, it is Tom again. Did you find your keys?"), (8.5, WEARER, "Yes, they were on the shelf.")),
            ),
            Scene(15, Photo("motorcycle")),  # a parked motorbike: only the picture shows it
        ),
    ),
    Recording(
        "20261118_193000",
        _at(2, 19, 30),
        (
            Scene(
                15,
                Board(("LASAGNE", "OVEN 180 C", "45 MIN"), paper=(255, 250, 235), wall=(200, 170, 140)),
                (
                    (2.0, MARIA, "Dinner is lasagne tonight."),
                    (7.0, WEARER, "I will set the oven to one hundred and eighty degrees."),
                ),
            ),
            Scene(15, Photo("astronaut"), ((3.0, MARIA, "This documentary about the moon landing is great."),)),
        ),
    ),
)


# --- pictures ------------------------------------------------------------------------------------


def photo(name: str) -> np.ndarray:
    """An RGB uint8 photo bundled in the scikit-image wheel (no download)."""
    import skimage.data

    image = skimage.data.stereo_motorcycle()[0] if name == "motorcycle" else getattr(skimage.data, name)()
    return np.repeat(image[..., None], 3, axis=2) if image.ndim == 2 else image[..., :3]


def _font(size: int) -> ImageFont.FreeTypeFont:
    if not FONT.is_file():
        raise FileNotFoundError(f"{FONT}: missing (install the Debian package fonts-dejavu-core)")
    return ImageFont.truetype(str(FONT), size)


def board_image(board: Board, seed: int) -> np.ndarray:
    """A wall with the board on it, the text centred in large letters; the wall has a little texture."""
    rng = np.random.default_rng(seed)
    w, h = int(WIDTH * 1.25), int(HEIGHT * 1.25)
    wall = np.clip(np.asarray(board.wall, np.float32) + rng.normal(0, 6, (h, w, 1)), 0, 255).astype(np.uint8)
    canvas = Image.fromarray(np.broadcast_to(wall, (h, w, 3)).copy())
    draw = ImageDraw.Draw(canvas)
    size = 64  # the largest letters whose longest line fits the middle of the view, which the pan keeps in frame
    while size > 20 and max(draw.textlength(line, font=_font(size)) for line in board.lines) > 0.55 * w:
        size -= 4
    font = _font(size)
    heights = [draw.textbbox((0, 0), line, font=font)[3] for line in board.lines]
    widths = [draw.textlength(line, font=font) for line in board.lines]
    gap = size // 2
    box_w, box_h = max(widths) + 2 * size, sum(heights) + gap * (len(board.lines) - 1) + 2 * size
    left, top = (w - box_w) // 2, (h - box_h) // 2
    draw.rectangle((left, top, left + box_w, top + box_h), fill=board.paper, outline=(60, 60, 60), width=4)
    y = top + size
    for line, lw, lh in zip(board.lines, widths, heights):
        draw.text(((w - lw) / 2, y), line, font=font, fill=board.ink)
        y += lh + gap
    return np.asarray(canvas)


def sign_overlay(frame: np.ndarray, lines: tuple[str, ...]) -> np.ndarray:
    """A street sign (white on green) in the upper part of a walk frame."""
    image = Image.fromarray(frame)
    draw = ImageDraw.Draw(image)
    font = _font(44)
    text = "\n".join(lines)
    x0, y0, x1, y1 = draw.multiline_textbbox((0, 0), text, font=font)
    left, top = WIDTH // 2 - (x1 - x0) // 2 - 20, 40
    draw.rectangle((left, top, left + x1 - x0 + 40, top + y1 - y0 + 40), fill=(20, 110, 60), outline=(240, 240, 240), width=3)
    draw.multiline_text((left + 20 - x0, top + 20 - y0), text, font=font, fill=(245, 245, 245))
    return np.asarray(image)


def pan_frames(image: np.ndarray, seconds: float, seed: int):
    """Frames looking at a still picture: a slow drift across it plus a small head shake."""
    import cv2

    rng = np.random.default_rng(seed)
    h, w = image.shape[:2]
    scale = max(WIDTH / w, HEIGHT / h) * 1.15  # cover the frame with room to drift
    big = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    spare_x, spare_y = big.shape[1] - WIDTH, big.shape[0] - HEIGHT
    n = round(seconds * FPS)
    shake = np.cumsum(rng.normal(0, 0.6, (n, 2)), axis=0)
    shake -= np.linspace(0, 1, n)[:, None] * shake[-1]  # a random walk that returns: stays in bounds
    for i in range(n):
        t = i / max(1, n - 1)
        x = int(np.clip(spare_x * (0.3 + 0.4 * t) + shake[i, 0], 0, spare_x))
        y = int(np.clip(spare_y * 0.5 + shake[i, 1], 0, spare_y))
        yield big[y : y + HEIGHT, x : x + WIDTH]


def walk_source_frames(video: Path = WALK_VIDEO) -> np.ndarray:
    """Every frame of the walk video as RGB (n, HEIGHT, WIDTH, 3) at FPS."""
    if not video.is_file():
        raise FileNotFoundError(f"{video}: the walk footage is missing (../shared/media)")
    raw = subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-i",
            str(video),
            "-map",
            "0:v:0",
            "-vf",
            f"fps={FPS},scale={WIDTH}:{HEIGHT}",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ],
        check=True,
        capture_output=True,
    ).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, HEIGHT, WIDTH, 3)


def walk_frames(walk: Walk, seconds: float, source: np.ndarray):
    """The walk slowed to two thirds, going back and forth over the footage when the scene is longer."""
    n = round(seconds * FPS)
    cycle = 2 * (len(source) - 1)
    for i in range(n):
        pos = int(walk.start * FPS + i * 2 / 3) % cycle
        frame = source[pos if pos < len(source) else cycle - pos]
        frame = frame[:, ::-1] if walk.mirror else frame
        yield sign_overlay(np.ascontiguousarray(frame), walk.sign) if walk.sign else frame


def scene_frames(scene: Scene, seed: int, walk_source: np.ndarray):
    picture, look = scene.picture, scene.look
    if isinstance(picture, Walk):
        frames = walk_frames(picture, scene.seconds, walk_source)
    else:
        image = photo(picture.name) if isinstance(picture, Photo) else board_image(picture, seed)
        frames = pan_frames(image[:, round(look.cut * image.shape[1]) :], scene.seconds, seed)
    if look == Look():
        return frames
    rng = np.random.default_rng(seed)
    return (realism.degrade(frame, look.light, look.blur, float(rng.uniform(0, 180)), rng) for frame in frames)


# --- sound ---------------------------------------------------------------------------------------


def speak(voice: str | Voice, words: str, workdir: Path) -> np.ndarray:
    """espeak-ng speech as float32 samples at RATE (a clean-day voice at SPEECH, a real-day one at its rate)."""
    if shutil.which("espeak-ng") is None:
        raise FileNotFoundError("espeak-ng is not installed (Debian package espeak-ng; ./setup.sh installs it)")
    espeak, args = (voice, SPEECH) if isinstance(voice, str) else (voice.espeak, voice.args())
    out = workdir / f"say-{hashlib.sha256(f'{espeak}|{args}|{words}'.encode()).hexdigest()[:12]}.wav"
    subprocess.run(["espeak-ng", "-v", espeak, *args, "-w", str(out), words], check=True, capture_output=True)
    with wave.open(str(out)) as handle:
        if handle.getframerate() != RATE or handle.getsampwidth() != 2:
            raise RuntimeError(
                f"espeak-ng wrote {handle.getframerate()} Hz / {handle.getsampwidth() * 8} bit, expected {RATE} Hz 16 bit"
            )
        samples = np.frombuffer(handle.readframes(handle.getnframes()), np.int16)
    return samples.astype(np.float32) / 32768


def voice_name(voice: str | Voice) -> str:
    return VOICE_NAMES[voice] if isinstance(voice, str) else voice.name


@dataclass(frozen=True)
class Line:
    """One thing said, as the script has it: who, through what room and noise, and when (wall-clock
    seconds), for the word error rate of what recognition heard."""

    recording: str
    voice: str
    room: str
    noise: str
    snr_db: float | None  # None where the scene has room tone alone
    start: float
    end: float
    words: str


def script(plan: tuple[Recording, ...]) -> list[Line]:
    """Every line of `plan` with its spoken span (espeak-ng renders each once to learn its length)."""
    from egodesk.core.timeutil import to_ts

    lines = []
    with tempfile.TemporaryDirectory(prefix="egodesk-script-") as tmp:
        for recording in plan:
            offset = to_ts(recording.start)
            for scene in recording.scenes:
                for at, voice, words in scene.speech:
                    seconds = len(speak(voice, words, Path(tmp))) / RATE
                    room = "near" if isinstance(voice, str) else voice.room
                    snr = scene.snr_db if scene.noise else None
                    lines.append(
                        Line(recording.name, voice_name(voice), room, scene.noise, snr, offset + at, offset + at + seconds, words)
                    )
                offset += scene.seconds
    return lines


def walk_ambience(video: Path = WALK_VIDEO) -> np.ndarray:
    """The walk video's own street sound, mono at RATE."""
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(video), "-map", "0:a:0", "-ac", "1", "-ar", str(RATE), "-f", "f32le", "-"],
        check=True,
        capture_output=True,
    ).stdout
    return np.frombuffer(raw, np.float32)


BABBLE_VOICES = ("en-us+m1", "en+f3", "en-us+f2", "en-gb-scotland+m2", "en-029+f1", "en-us-nyc+m4")


def babble(workdir: Path) -> np.ndarray:
    """Other people talking at once, as in a café: six voices of other speakers, each saying café
    small talk and offset from the others, heard across the room."""
    talk = (
        "Did you see the match last night? It went to extra time.",
        "We are thinking of going to Lisbon in the spring.",
        "My brother just started a new job at the hospital.",
        "Could we get the bill when you have a moment?",
        "The traffic on the ring road was terrible this morning.",
        "I have been reading a really good book about bees.",
    )
    parts = [
        realism.through(speak(Voice("other", v, 180), line, workdir), "far", n)
        for n, (v, line) in enumerate(zip(BABBLE_VOICES, talk))
    ]
    length = max(len(p) for p in parts) * 2
    out = np.zeros(length, np.float32)
    for n, part in enumerate(parts):
        out += np.roll(np.resize(part, length), n * length // len(parts))
    return out


def soundtrack(recording: Recording, seed: int, workdir: Path, ambience: np.ndarray) -> np.ndarray:
    """Room tone everywhere, street sound under walks, the voices at their moments (through their
    rooms), and each scene's place sound at its signal-to-noise ratio."""
    rng = np.random.default_rng(seed)
    track = rng.normal(0, 0.003, round(recording.seconds * RATE)).astype(np.float32)
    offset = 0.0
    for number, scene in enumerate(recording.scenes):
        first, n = round(offset * RATE), round(scene.seconds * RATE)
        if isinstance(scene.picture, Walk) and not scene.noise:
            track[first : first + n] += 0.5 * np.resize(ambience, n)
        speech = np.zeros(n, np.float32)
        for line, (at, voice, words) in enumerate(scene.speech):
            voice_samples = speak(voice, words, workdir)
            if not isinstance(voice, str):
                voice_samples = realism.through(voice_samples, voice.room, seed * 1000 + number * 10 + line)
            begin = round(at * RATE)
            if begin + len(voice_samples) > n:
                raise ValueError(f"{recording.name}: '{words}' runs past the end of its scene")
            speech[begin : begin + len(voice_samples)] += 0.8 * voice_samples
        if scene.noise:
            noise = realism.background(
                scene.noise, n, seed * 100 + number, ambience, babble(workdir) if scene.noise == "cafe" else ambience
            )
            speech += realism.mix_at_snr(noise, realism.speech_level(speech), scene.snr_db)
        track[first : first + n] += speech
        offset += scene.seconds
    return np.clip(track, -1, 1)


# --- files ---------------------------------------------------------------------------------------


def file_name(recording: Recording) -> str:
    return recording.name + ".mp4"


def creation_time(recording: Recording) -> str:
    """The container's creation_time: the local start as UTC on this machine's zone (cameras write UTC)."""
    return recording.start.astimezone().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def encode(recording: Recording, out: Path, seed: int, walk_source: np.ndarray, ambience: np.ndarray) -> None:
    with tempfile.TemporaryDirectory(prefix="egodesk-testday-") as tmp:
        workdir = Path(tmp)
        audio = workdir / "audio.wav"
        with wave.open(str(audio), "wb") as handle:
            handle.setnchannels(1)
            handle.setsampwidth(2)
            handle.setframerate(RATE)
            handle.writeframes((soundtrack(recording, seed, workdir, ambience) * 32767).astype(np.int16).tobytes())
        partial = out.with_name(out.name + ".partial.mp4")
        metadata = ["-metadata", f"creation_time={creation_time(recording)}"] if recording.dated_by == "metadata" else []
        command = [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-s",
            f"{WIDTH}x{HEIGHT}",
            "-r",
            str(FPS),
            "-i",
            "-",
            "-i",
            str(audio),
            "-map",
            "0:v",
            "-map",
            "1:a",
            "-map_metadata",
            "-1",
            *metadata,
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-crf",
            "26",
            "-pix_fmt",
            "yuv420p",
            "-threads",
            "1",
            "-c:a",
            "aac",
            "-b:a",
            "64k",
            "-ar",
            "44100",
            "-fflags",
            "+bitexact",
            "-flags:v",
            "+bitexact",
            "-flags:a",
            "+bitexact",
            "-shortest",
            str(partial),
        ]
        errors = workdir / "ffmpeg.log"  # a file, not a pipe: nobody reads a pipe while frames are written
        with open(errors, "wb") as log, subprocess.Popen(command, stdin=subprocess.PIPE, stderr=log) as process:
            assert process.stdin is not None
            try:
                for index, scene in enumerate(recording.scenes):
                    for frame in scene_frames(scene, seed * 100 + index, walk_source):
                        process.stdin.write(np.ascontiguousarray(frame).tobytes())
            except BrokenPipeError:
                pass  # ffmpeg stopped early: its log says why
            finally:
                process.stdin.close()
        if process.returncode != 0:
            partial.unlink(missing_ok=True)
            raise RuntimeError(f"ffmpeg failed writing {out.name}: {errors.read_text(errors='replace').strip()}")
        partial.replace(out)


def default_out(plan: tuple[Recording, ...] | None = None) -> Path:
    """A folder named by the plan (and how it is rendered): a changed plan is written anew, not mixed
    with files of the old one (make_day keeps any file already there)."""
    rendering = (SPEECH, WIDTH, HEIGHT, FPS, RATE) if plan is None else (WIDTH, HEIGHT, FPS, RATE, inspect.getsource(realism))
    digest = hashlib.sha256(repr((DAY if plan is None else plan, *rendering)).encode()).hexdigest()[:12]
    return platformdirs.user_cache_path("egodesk") / "testday" / digest


def make_day(out: Path | None = None, log=print, plan: tuple[Recording, ...] | None = None) -> list[Path]:
    """Write every recording of `plan` (default the clean `DAY`) into `out` (skipping files already
    there); returns their paths."""
    plan = DAY if plan is None else plan
    out = Path(out or default_out(None if plan is DAY else plan))
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / file_name(r) for r in plan]
    todo = [(n, r, p) for n, (r, p) in enumerate(zip(plan, paths)) if not p.exists()]
    if todo:
        walk_source, ambience = walk_source_frames(), walk_ambience()
        for n, recording, path in todo:
            log(f"writing {path.name} ({recording.seconds:.0f} s, {recording.start:%a %d %b %H:%M})")
            encode(recording, path, seed=1000 + n, walk_source=walk_source, ambience=ambience)
    return paths


def files_digest(paths: list[Path]) -> str:
    """sha256 over the generated files' names and bytes: a library built from them is reused while this holds."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def plan_of(day: str) -> tuple[Recording, ...]:
    """The plan of a test day by name: `clean` (this module's DAY) or `real` (real_day.REAL_DAY)."""
    if day == "clean":
        return DAY
    if day == "real":
        from .real_day import REAL_DAY

        return REAL_DAY
    raise ValueError(f"unknown test day {day!r} (clean or real)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, help="folder for the video files (default: named by the plan)")
    parser.add_argument("--day", choices=("clean", "real"), default="clean", help="which test day")
    args = parser.parse_args(argv)
    plan = plan_of(args.day)
    out = args.out or default_out(None if plan is DAY else plan)
    paths = make_day(out, plan=plan)
    print(f"{len(paths)} recordings in {out}; digest {files_digest(paths)[:16]}")
    return 0


if __name__ == "__main__":  # `-m testday.make_day`: run the package's copy, whose classes real_day's scenes are made of
    from .make_day import main as package_main

    raise SystemExit(package_main())
