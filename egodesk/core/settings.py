"""The one typed settings schema: defaults, validation, environment overrides, persistence.

Each field carries a title, a description and a group; the GUI's settings dialog is generated from
this schema, the CLI reads the same object. Environment variables `EGODESK_<FIELD>` (upper case)
override the stored value, which is handy for tests and for CI. The research papers' parameters are
the defaults.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

SCHEMA_VERSION = 1
ENV_PREFIX = "EGODESK_"


def _field(default: Any, title: str, group: str, description: str = "", **limits: Any) -> Any:
    return Field(default, title=title, description=description, json_schema_extra={"group": group}, **limits)


class Settings(BaseModel):
    """All user-facing settings. Unknown keys in a stored file are ignored (older or newer versions)."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    # Ingest
    clip_seconds: float = _field(15.0, "Clip length (s)", "Ingest", "Length of the non-overlapping clips footage is cut into.", ge=2.0, le=600.0)
    frames_per_clip: int = _field(15, "Frames sampled per clip", "Ingest", "Frames read from each clip before keyframe selection.", ge=1, le=120)
    keyframes_per_clip: int = _field(5, "Keyframes per clip", "Ingest", "k-means clusters over frame features (CARVE: n=5).", ge=1, le=20)
    captioner: Literal["describe", "vlm", "server"] = _field("describe", "Captioner", "Ingest", "describe: from tags, on-screen text and speech; vlm: a local GGUF + mmproj; server: an OpenAI-compatible server.")
    asr_engine: Literal["faster-whisper", "openai-whisper"] = _field("faster-whisper", "Speech engine", "Ingest")
    asr_model: Literal["asr", "asr-lite"] = _field("asr", "Speech model", "Ingest", "asr: Whisper base (multilingual); asr-lite: tiny.en (faster, English only).")
    ocr_enabled: bool = _field(True, "Read on-screen text", "Ingest")
    tags_per_frame: int = _field(5, "Tags per keyframe", "Ingest", ge=1, le=20)

    # Models and servers
    llm_model: Literal["llm-quality", "llm-fast", "llm-test"] = _field("llm-quality", "Language model", "Models", "Manifest role of the local LLM used for extraction and answers.")
    llm_backend: Literal["local", "server"] = _field("local", "Language model backend", "Models")
    vlm_model_path: str = _field("", "VLM model (GGUF)", "Models", "A vision-language GGUF for the vlm captioner.")
    vlm_mmproj_path: str = _field("", "VLM projector (mmproj GGUF)", "Models")
    server_url: str = _field("", "Server URL", "Models", "An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    server_model: str = _field("", "Server model name", "Models")
    server_timeout_s: float = _field(120.0, "Server timeout (s)", "Models", ge=1.0, le=3600.0)
    threads: int = _field(max(1, os.cpu_count() or 1), "Inference threads", "Models", ge=1, le=256)

    # Memory
    wearer_name: str = _field("I", "Wearer's name", "Memory", "Prepended to interaction records (Imprint).", min_length=1, max_length=80)
    subchunk_max_chars: int = _field(240, "Subchunk length cap (chars)", "Memory", ge=40, le=4000)

    # Retrieval and answers
    strategy: str = _field("auto", "Retrieval strategy", "Answers")
    top_k: int = _field(12, "Evidence units (K)", "Answers", "Parents handed to the reasoner (parent retrieval: K=12).", ge=1, le=100)

    @classmethod
    def groups(cls) -> dict[str, list[str]]:
        """Field names per group, in declaration order (for the settings dialog)."""
        out: dict[str, list[str]] = {}
        for name, info in cls.model_fields.items():
            group = (info.json_schema_extra or {}).get("group", "General")
            out.setdefault(group, []).append(name)
        return out

    @classmethod
    def load(cls, path: Path | None, environ: dict[str, str] | None = None) -> "Settings":
        """Stored values (if any), then environment overrides on top. Raises SettingsError on bad values."""
        environ = os.environ if environ is None else environ
        data: dict[str, Any] = {}
        if path is not None and path.exists():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise SettingsError(f"{path}: unreadable settings file ({exc})") from exc
            data.update(_migrate(stored).get("values", {}))
        for name in cls.model_fields:
            key = ENV_PREFIX + name.upper()
            if key in environ:
                data[name] = environ[key]
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
