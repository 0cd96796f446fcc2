"""Speech recognition: audio file -> timed transcript with word timestamps.

Engines share one small protocol so the pipeline never knows which one runs. faster-whisper
(CTranslate2) is the default: its weights ship in the manifest and it is fast on CPU. openai-whisper is
an optional engine for users who install it and give it a converted `.pt` checkpoint; nothing here
ever downloads weights.
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from egodesk.core.words import spoken_text

if TYPE_CHECKING:
    from egodesk.core.settings import Settings

log = logging.getLogger(__name__)

SAMPLE_RATE = 16_000  # what every Whisper model expects
# openai-whisper: temperature fallback retries a window that decoded into a repetition loop. The stock schedule
# (0.0 .. 1.0, six passes) can spend 10x real time on one bad window; three passes bound it.
FALLBACK_TEMPERATURES = (0.0, 0.3, 0.6)
# Whisper names a recording's language from its first 30 s of speech; in noise that is a guess: café
# babble was taken for Welsh (p 0.55) and the whole recording written as Welsh nonsense, while English
# speech in a kitchen was detected at p 0.58-0.64. A detection less sure than this that disagrees with
# the language the library is usually heard in is overruled by it.
LANGUAGE_TRUST = 0.8


@dataclass(frozen=True)
class Word:
    text: str
    start: float
    end: float
    probability: float


@dataclass(frozen=True)
class Segment:
    start: float
    end: float
    text: str
    words: tuple[Word, ...] = ()


@dataclass(frozen=True)
class Transcript:
    """Times are seconds from the start of the audio file; `duration` is the whole file's."""

    language: str | None
    segments: tuple[Segment, ...]
    duration: float
    engine: str = ""
    language_probability: float = 0.0

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segments).strip()

    def text_between(self, start: float, end: float) -> str:
        """Words spoken within [start, end) (a clip's share of a file-level transcript)."""
        words = [w.text for s in self.segments for w in s.words if start <= (w.start + w.end) / 2 < end]
        if words or not self.segments:
            return spoken_text(words)
        # Engines without word times: whole segments that overlap the span.
        return " ".join(s.text for s in self.segments if s.start < end and start < s.end).strip()


class TranscriptionError(RuntimeError):
    """The audio could not be transcribed; the message names the file and the reason."""


class Transcriber(Protocol):
    def transcribe(self, audio_path: Path, language: str | None = None) -> Transcript: ...


def transcribe_as_usual(transcriber: Transcriber, audio_path: Path, usual: str | None) -> Transcript:
    """`audio_path` transcribed in the language detected, unless that detection is unsure
    (< LANGUAGE_TRUST) and differs from `usual` (the library's usual language): then in `usual`."""
    transcript = transcriber.transcribe(audio_path)
    doubtful = transcript.language not in (None, usual) and transcript.language_probability < LANGUAGE_TRUST
    if usual and doubtful:
        log.info(
            "%s: heard as %s at p %.2f; transcribed in the library's %s",
            audio_path.name,
            transcript.language,
            transcript.language_probability,
            usual,
        )
        return transcriber.transcribe(audio_path, language=usual)
    return transcript


def _load_audio(audio_path: Path):
    """16 kHz mono float32 samples, or None when the file has no audio stream (a silent video)."""
    import av
    from faster_whisper.audio import decode_audio

    path = Path(audio_path)
    if not path.is_file():
        raise TranscriptionError(f"{path}: no such audio file")
    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                return None
        return decode_audio(str(path), sampling_rate=SAMPLE_RATE)
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise TranscriptionError(f"{path}: cannot decode audio ({exc})") from exc


def _empty(engine: str) -> Transcript:
    return Transcript(language=None, segments=(), duration=0.0, engine=engine)


class FasterWhisperTranscriber:
    """faster-whisper on CPU: VAD (bundled Silero) skips silence, word timestamps for clip alignment.

    The batched pipeline decodes up to `batch_size` VAD-bounded 30 s windows at once, each on its own
    (no conditioning on previous text, so one misheard window cannot start a hallucination loop), with
    greedy decoding: on 60 s of speech it used 5 CPU-seconds where sequential decoding used 7 (40 when
    its temperature fallback kicked in on repetitive speech). Its segments are whole windows, so they
    are split back into sentences at the words' end punctuation.
    """

    name = "faster-whisper"

    def __init__(
        self,
        model_dir: Path,
        threads: int = 2,
        compute_type: str = "int8",
        beam_size: int = 1,
        batch_size: int = 8,
        hotwords: str | None = None,
    ):
        self.model_dir = Path(model_dir)
        self.hotwords = hotwords or None  # the person's vocabulary (`vocabulary_prompt`); None: Whisper as it is
        self.threads = threads
        self.compute_type = compute_type
        self.beam_size = beam_size
        self.batch_size = batch_size
        self._model = None

    def _load(self):
        if self._model is None:  # lazy: constructing an engine must stay cheap (settings, tests)
            from faster_whisper import BatchedInferencePipeline, WhisperModel

            if not (self.model_dir / "model.bin").is_file():
                raise TranscriptionError(f"{self.model_dir}: not a faster-whisper model folder (no model.bin)")
            self._model = BatchedInferencePipeline(
                WhisperModel(
                    str(self.model_dir),
                    device="cpu",
                    compute_type=self.compute_type,
                    cpu_threads=self.threads,
                    local_files_only=True,
                )
            )
        return self._model

    def transcribe(self, audio_path: Path, language: str | None = None) -> Transcript:
        audio = _load_audio(audio_path)
        if audio is None:
            return _empty(self.name)
        model = self._load()
        try:
            segments, info = model.transcribe(
                audio,
                language=language,
                beam_size=self.beam_size,
                batch_size=self.batch_size,
                vad_filter=True,
                word_timestamps=True,
                condition_on_previous_text=False,
                temperature=0.0,
                hotwords=self.hotwords,
            )
            out = tuple(sentence for s in segments for sentence in _sentences(s))  # decoding happens here
        except (RuntimeError, ValueError) as exc:
            raise TranscriptionError(f"{audio_path}: transcription failed ({exc})") from exc
        # With no speech at all the detected language is a guess on silence: do not report it.
        lang = info.language if out else language
        return Transcript(
            language=lang,
            segments=out,
            duration=float(info.duration),
            engine=self.name,
            language_probability=float(info.language_probability or 0.0) if out else 0.0,
        )


SENTENCE_END = (".", "?", "!", "。", "？", "！")


def _sentences(segment) -> list[Segment]:
    """Split a decoded window into sentences by its words' end punctuation (windows are up to 30 s)."""
    words = [Word(w.word.strip(), float(w.start), float(w.end), float(w.probability)) for w in (segment.words or ())]
    if not words:
        text = segment.text.strip()
        return [Segment(float(segment.start), float(segment.end), text)] if text else []
    out, current = [], []
    for word in words:
        current.append(word)
        if word.text.endswith(SENTENCE_END):
            out.append(current)
            current = []
    if current:
        out.append(current)
    return [Segment(ws[0].start, ws[-1].end, spoken_text(w.text for w in ws), tuple(ws)) for ws in out]


WHISPER_MISSING = (
    "openai-whisper is not installed; pip install openai-whisper --no-deps (plus its small "
    "dependencies: tiktoken, more-itertools, numba) and give it a converted .pt checkpoint; "
    "egodesk never downloads Whisper weights"
)


class OpenAIWhisperTranscriber:
    """The reference openai-whisper implementation, for users who have it and a local `.pt` file.

    `model_path` must be a checkpoint file: `whisper.load_model` downloads when given a bare name,
    so the path is checked before it is ever called.
    """

    name = "openai-whisper"

    def __init__(self, model_path: Path, threads: int = 2, prompt: str | None = None):
        self.prompt = prompt or None  # the person's vocabulary, as this engine's initial prompt
        if importlib.util.find_spec("whisper") is None:
            raise TranscriptionError(WHISPER_MISSING)
        self.model_path = Path(model_path) if model_path else None
        if self.model_path is None or not self.model_path.is_file():
            raise TranscriptionError(f"openai-whisper needs a local checkpoint file; not found: {model_path or '(none set)'}")
        self.threads = threads
        self._model = None

    def transcribe(self, audio_path: Path, language: str | None = None) -> Transcript:
        import torch
        import whisper

        audio = _load_audio(audio_path)
        if audio is None:
            return _empty(self.name)
        torch.set_num_threads(self.threads)
        if self._model is None:
            self._model = whisper.load_model(str(self.model_path), device="cpu")
        try:
            result = self._model.transcribe(
                audio,
                language=language,
                word_timestamps=True,
                condition_on_previous_text=False,
                fp16=False,
                temperature=FALLBACK_TEMPERATURES,
                initial_prompt=self.prompt,
            )
        except (RuntimeError, ValueError) as exc:
            raise TranscriptionError(f"{audio_path}: transcription failed ({exc})") from exc
        segments = tuple(
            Segment(
                float(s["start"]),
                float(s["end"]),
                s["text"].strip(),
                tuple(
                    Word(w["word"].strip(), float(w["start"]), float(w["end"]), float(w.get("probability", 0.0)))
                    for w in s.get("words", ())
                ),
            )
            for s in result["segments"]
            if s["text"].strip()
        )
        return Transcript(
            language=result.get("language") if segments else language,
            segments=segments,
            duration=len(audio) / SAMPLE_RATE,
            engine=self.name,
        )


# Where a user drops a converted checkpoint for each speech role (inside the library's models folder).
OPENAI_WHISPER_FILES = {"asr": "openai-whisper/base.pt", "asr-lite": "openai-whisper/tiny.en.pt"}


def vocabulary_prompt(settings: Settings) -> str | None:
    """The person's vocabulary (Settings > Vocabulary) as words for the recogniser to expect, or None when
    they set none: hotwords were no clear gain on the benchmark days (docs/benchmarks.md), so Whisper runs
    as measured unless the person names their own words."""
    return ", ".join(settings.vocabulary) or None


def make_transcriber(settings: Settings, user_models: Path | None = None) -> Transcriber:
    """The engine and model the settings name, told the person's vocabulary. Model folders come from the
    manifest (`locate`)."""
    if settings.asr_engine == "openai-whisper":
        if importlib.util.find_spec("whisper") is None:
            raise TranscriptionError(WHISPER_MISSING)
        explicit = getattr(settings, "asr_model_path", "")  # a future settings field, if ever added
        if explicit:
            path = Path(explicit).expanduser()
        elif user_models is not None:
            path = user_models / OPENAI_WHISPER_FILES[settings.asr_model]
        else:
            raise TranscriptionError(
                f"openai-whisper needs a checkpoint in the library's models folder ({OPENAI_WHISPER_FILES[settings.asr_model]})"
            )
        return OpenAIWhisperTranscriber(path, threads=settings.threads, prompt=vocabulary_prompt(settings))
    from egodesk.core.manifest import locate

    return FasterWhisperTranscriber(
        locate(settings.asr_model, user_models), threads=settings.threads, hotwords=vocabulary_prompt(settings)
    )
