"""The one typed settings schema: defaults, validation, environment overrides, persistence.

Each field carries a title, a description and a group; the GUI's settings dialog is generated from
this schema, the CLI reads the same object. Environment variables `EGODESK_<FIELD>` (upper case)
override the stored value, which is handy for tests and for CI. The research papers' parameters are
the defaults.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

SCHEMA_VERSION = 1
ENV_PREFIX = "EGODESK_"


def _field(default: Any, title: str, group: str, description: str = "", editor: str = "", **limits: Any) -> Any:
    """A field of `group` (a tab of the settings dialog); `editor` names a special editor ("lines": a list
    of words edited as text, one a line)."""
    extra: dict[str, Any] = {"group": group, "editor": editor} if editor else {"group": group}
    return Field(default, title=title, description=description, json_schema_extra=extra, **limits)


def _imprint(default: Any, title: str, description: str, **limits: Any) -> Any:
    """A field of the Imprint memory's group; its defaults are the paper's values."""
    return _field(default, title, "Memory (Imprint)", description, **limits)


VOCABULARY_MAX_WORDS = 500  # the list is read into every search and every transcription
VOCABULARY_MAX_CHARS = 80  # one name, place or phrase


class Settings(BaseModel):
    """All user-facing settings. Unknown keys in a stored file are ignored (older or newer versions)."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    # Ingest
    clip_seconds: float = _field(
        15.0, "Clip length (s)", "Ingest", "Length of the non-overlapping clips footage is cut into.", ge=2.0, le=600.0
    )
    frames_per_clip: int = _field(
        10, "Frames sampled per clip", "Ingest", "Frames read from each clip before keyframe selection.", ge=1, le=120
    )
    keyframes_per_clip: int = _field(
        5, "Keyframes per clip", "Ingest", "k-means clusters over frame features (CARVE: n=5).", ge=1, le=20
    )
    captioner: Literal["describe", "vlm", "server"] = _field(
        "describe",
        "Captioner",
        "Ingest",
        "describe: from tags, on-screen text and speech; vlm: a local GGUF + mmproj; server: an OpenAI-compatible server.",
    )
    asr_engine: Literal["faster-whisper", "openai-whisper"] = _field("faster-whisper", "Speech engine", "Ingest")
    asr_model: Literal["asr", "asr-lite"] = _field(
        "asr", "Speech model", "Ingest", "asr: Whisper base (multilingual); asr-lite: tiny.en (faster, English only)."
    )
    ocr_enabled: bool = _field(True, "Read on-screen text", "Ingest")
    tags_per_frame: int = _field(5, "Tags per keyframe", "Ingest", ge=1, le=20)

    # Watched folders
    watched_folders: list[str] = _field(
        [],
        "Watched folders",
        "Watched folders",
        "Folders (a camera card's DCIM folder, a phone's sync folder) whose new videos, photos and voice notes are "
        "imported by themselves while the app or `egodesk watch run` runs, once they have stopped growing.",
    )
    watch_interval_s: float = _field(
        3.0,
        "Seconds between scans",
        "Watched folders",
        "A file is imported once its size and time are unchanged over two scans, so a copy still running is left alone.",
        ge=0.2,
        le=3600.0,
    )

    # Vocabulary
    vocabulary: list[str] = _field(
        [],
        "Your words",
        "Vocabulary",
        "Names, places and words you use, one a line (Katrina, Ty Hafan, pétanque). Speech recognition is told them "
        "(Whisper hotwords: only when this list is not empty, since they are not a clear gain in general), and search "
        "takes them as the right spelling of a word typed or heard alike.",
        editor="lines",
    )

    # Models and servers
    llm_model: Literal["llm-quality", "llm-fast", "llm-test"] = _field(
        "llm-quality", "Language model", "Models", "Manifest role of the local LLM used for extraction and answers."
    )
    embedder_model: Literal["embedder-nomic", "embedder"] = _field(
        "embedder-nomic",
        "Text embedder",
        "Models",
        "Manifest role of the text embedder. embedder-nomic: nomic-embed-text-v1.5 (finds far more, ~7 texts/s a core); "
        "embedder: all-MiniLM-L6-v2 (fast tier, ~10x faster). A library built with the other one is re-embedded in the "
        "background; questions use its old vectors meanwhile.",
    )
    llm_backend: Literal["local", "server"] = _field("local", "Language model backend", "Models")
    llm_model_path: str = _field(
        "",
        "Custom language model (GGUF)",
        "Models",
        "A GGUF of your own used instead of the manifest model when set (added in Models).",
    )
    vlm_model_path: str = _field("", "VLM model (GGUF)", "Models", "A vision-language GGUF for the vlm captioner.")
    vlm_mmproj_path: str = _field("", "VLM projector (mmproj GGUF)", "Models")
    server_url: str = _field("", "Server URL", "Models", "An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    server_model: str = _field("", "Server model name", "Models")
    server_timeout_s: float = _field(120.0, "Server timeout (s)", "Models", ge=1.0, le=3600.0)
    server_requests: int = _field(
        0,
        "Server requests in flight",
        "Models",
        "How many memory-building requests the server gets at once. 0: as many as it has slots (llama.cpp's /props), else 4.",
        ge=0,
        le=64,
    )
    threads: int = _field(max(1, os.cpu_count() or 1), "Inference threads", "Models", ge=1, le=256)

    # Memory
    wearer_name: str = _field(
        "I", "Wearer's name", "Memory", "Prepended to interaction records (Imprint).", min_length=1, max_length=80
    )
    subchunk_max_chars: int = _field(240, "Subchunk length cap (chars)", "Memory", ge=40, le=4000)

    memory_records: bool = _field(
        True,
        "Build interaction records",
        "Memory",
        "LLM-extracted person-action-object records (Imprint); the slow part of indexing on a CPU.",
    )
    memory_atomic: bool = _field(
        True, "Build atomic statements", "Memory", "LLM-written self-contained statements in four views (EgoCITE)."
    )

    # Memory (Imprint): interaction records and their online compression; the paper's values
    records_batch_size: int = _imprint(
        12,
        "Records: entries per LLM call",
        "Captions the LLM turns into interaction records in one call (batching amortises the prompt).",
        ge=1,
        le=64,
    )
    imprint_history_k: int = _imprint(
        5, "History length k", "Previous records that contextualise a record's embedding.", ge=0, le=50
    )
    imprint_alpha_h: float = _imprint(
        0.5, "History weight alpha_h", "Weight of the history in the contextualised embedding.", ge=0.0, le=1.0
    )
    imprint_delta_h: float = _imprint(
        0.3, "History similarity delta_h", "Only previous records more similar than this contribute context.", ge=-1.0, le=1.0
    )
    imprint_delta_g: float = _imprint(
        0.75,
        "Prototype threshold delta_g",
        "A record joins its nearest event prototype at this cosine similarity or more.",
        ge=-1.0,
        le=1.0,
    )
    imprint_max_prototypes: int = _imprint(
        300, "Prototype cap", "At the cap, records join their nearest prototype instead of creating one.", ge=1, le=100000
    )
    imprint_lambda: float = _imprint(
        1.14, "Recency decay lambda", "Importance decays as exp(-lambda * dT), dT in time units.", ge=0.0, le=100.0
    )
    imprint_time_unit_s: float = _imprint(
        3600.0, "Recency time unit (s)", "Seconds per unit of dT in the recency term (hours).", ge=1.0, le=10_000_000.0
    )
    imprint_tau: float = _imprint(0.2, "Importance threshold tau", "Records with importance w >= tau are kept.", ge=0.0, le=100.0)
    imprint_delta_m: float = _imprint(
        0.75,
        "Consolidation threshold delta_m",
        "A kept record merges into a memory entry when action-object and context similarity both reach this.",
        ge=-1.0,
        le=1.0,
    )

    # Memory (EgoCITE): multi-view atomic statements
    atomic_batch_size: int = _field(
        4, "Atomic: clips per LLM call", "Memory (EgoCITE)", "Clips whose atomic statements one LLM call writes.", ge=1, le=32
    )
    atomic_context_before: int = _field(
        2,
        "Atomic: context clips before",
        "Memory (EgoCITE)",
        "Neighbouring clips before a batch shown as local context.",
        ge=0,
        le=10,
    )
    atomic_context_after: int = _field(
        1,
        "Atomic: context clips after",
        "Memory (EgoCITE)",
        "Neighbouring clips after a batch shown as local context.",
        ge=0,
        le=10,
    )

    # Retrieval and answers
    strategy: str = _field("auto", "Retrieval strategy", "Answers")
    top_k: int = _field(
        12, "Evidence units (K)", "Answers", "Parents handed to the reasoner (parent retrieval: K=12).", ge=1, le=100
    )
    rrf_k0: int = _field(
        60, "Fusion constant k0", "Answers", "Reciprocal rank fusion of dense and BM25 rankings (hybrid: k0=60).", ge=1, le=1000
    )
    rerank_candidates: int = _field(
        24,
        "Rerank candidates",
        "Answers",
        "Candidates the LLM reranker judges per question (each costs one LLM call).",
        ge=1,
        le=200,
    )
    records_w_object: float = _field(
        0.53, "Records: object weight", "Answers", "Imprint retrieval score weight of cos(object).", ge=0.0, le=1.0
    )
    records_w_action: float = _field(
        0.29, "Records: action weight", "Answers", "Imprint retrieval score weight of cos(action).", ge=0.0, le=1.0
    )
    records_w_importance: float = _field(
        0.18, "Records: importance weight", "Answers", "Imprint retrieval score weight of the importance w.", ge=0.0, le=1.0
    )
    records_top_k: int = _field(
        5, "Records: memories retrieved", "Answers", "Imprint hands the top 5 memory entries to the reasoner.", ge=1, le=100
    )
    timeaware_rounds: int = _field(
        3,
        "Time-aware retrieval rounds",
        "Answers",
        "EgoCITE retrieval rounds into the evidence pool (3 holds most of the gain).",
        ge=1,
        le=5,
    )
    answer_prompt_tokens: int = _field(
        600,
        "Answer prompt budget",
        "Answers",
        "The whole prompt the reasoner reads per question (rules, evidence, question), in tokens: the strongest "
        "evidence lines that fit. A CPU reads ~40 prompt tokens a second (the paper spends 3,600).",
        ge=300,
        le=16000,
    )
    answer_choice: Literal["text", "letter"] = _field(
        "text",
        "Multiple choice answered with",
        "Answers",
        "text: the model writes the chosen option itself (a small model maps evidence to an option far better this way); "
        "letter: the option's letter.",
    )

    @field_validator("watched_folders", mode="before")
    @classmethod
    def _folder_list(cls, value: Any) -> Any:
        """An environment override is text: a JSON list, or folders separated by the path separator (':')."""
        if isinstance(value, str):
            text = value.strip()
            return json.loads(text) if text.startswith("[") else [part for part in text.split(os.pathsep) if part]
        return value

    @field_validator("vocabulary", mode="before")
    @classmethod
    def _vocabulary(cls, value: Any) -> Any:
        """One entry a line (an environment override: a JSON list, or lines or commas), spaces tidied, empty
        lines and repeats (case aside) dropped; too many or too long entries are refused, naming one."""
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else [part for line in text.splitlines() for part in line.split(",")]
        if not isinstance(value, list):
            return value
        words: dict[str, str] = {}
        for entry in value:
            word = " ".join(str(entry).split())
            if len(word) > VOCABULARY_MAX_CHARS:
                raise ValueError(f"“{word[:30]}…” is longer than {VOCABULARY_MAX_CHARS} characters: one name or word a line")
            if word:
                words.setdefault(word.casefold(), word)
        if len(words) > VOCABULARY_MAX_WORDS:
            raise ValueError(f"at most {VOCABULARY_MAX_WORDS} words (this list has {len(words)})")
        return list(words.values())

    @classmethod
    def groups(cls) -> dict[str, list[str]]:
        """Field names per group, in declaration order (for the settings dialog)."""
        out: dict[str, list[str]] = {}
        for name, info in cls.model_fields.items():
            extra = info.json_schema_extra  # `_field`'s dict
            group = str(extra.get("group", "General")) if isinstance(extra, dict) else "General"
            out.setdefault(group, []).append(name)
        return out

    @classmethod
    def load(cls, path: Path | None, environ: Mapping[str, str] | None = None) -> Settings:
        """Stored values (if any), then environment overrides on top. Raises SettingsError on bad values."""
        env: Mapping[str, str] = os.environ if environ is None else environ
        data: dict[str, Any] = {}
        if path is not None and path.exists():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise SettingsError(f"{path}: unreadable settings file ({exc})") from exc
            data.update(_migrate(stored).get("values", {}))
        for name in cls.model_fields:
            key = ENV_PREFIX + name.upper()
            if key in env:
                data[name] = env[key]
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise SettingsError(_describe(exc)) from exc

    def save(self, path: Path) -> None:
        """Write atomically (temp file + rename) so a crash never leaves half a settings file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"version": SCHEMA_VERSION, "values": self.model_dump()}, indent=2), encoding="utf-8")
        os.replace(tmp, path)


class SettingsError(ValueError):
    """A stored or overridden setting is invalid; the message names the field and the reason."""


def _migrate(stored: dict[str, Any]) -> dict[str, Any]:
    """Bring an older settings file up to SCHEMA_VERSION (version 1 is the first; nothing to do yet)."""
    if "values" not in stored:  # a bare mapping written by hand
        return {"version": SCHEMA_VERSION, "values": stored}
    return stored


def _describe(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors())
