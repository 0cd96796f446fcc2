"""Clip captions: what happened in one clip, in the first person, from its keyframes, tags, on-screen
text and speech.

Three engines behind one protocol:
- `DescribeCaptioner` (default): no vision-language model ships offline, so it states what the frame
  tagger, OCR and speech recognition found, hedging what they are unsure of. Deterministic.
- `ServerCaptioner`: any OpenAI-compatible chat server the user runs (a VLM, or a text-only LLM, in
  which case the tags stand in for the images).
- `VlmCaptioner`: a local GGUF + mmproj through llama-cpp-python's multimodal chat handlers.
The model-backed engines share one query-aware prompt (Imprint's meta-question categories as implicit
guidance, the clip's transcript as context as in EgoCITE's multimodal captions).
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import cv2
import numpy as np

from egodesk.core.timeutil import format_ts
from egodesk.perception import ocr, prompts
from egodesk.perception.chat_server import ChatServer, ServerError

if TYPE_CHECKING:
    from egodesk.core.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class Keyframe:
    image: np.ndarray | None  # BGR
    tags: list[tuple[str, float]] = field(default_factory=list)  # (ImageNet label, probability)
    ocr: str = ""  # its texts (TextReader.read)
    time: float | None = None  # absolute seconds


@dataclass
class ClipContext:
    start: float  # absolute seconds
    end: float
    keyframes: list[Keyframe] = field(default_factory=list)
    transcript: str = ""
    wearer: str = "I"
    previous_caption: str | None = None

    def screen_texts(self) -> list[str]:
        """What was read on screen over all keyframes: each text once (case-insensitive), first seen first."""
        return ocr.screen_texts(frame.ocr for frame in self.keyframes)


class CaptionerError(RuntimeError):
    """A captioner cannot work; the message names the model file or server URL and the reason."""


class Captioner(Protocol):
    needs_images: bool

    def caption(self, ctx: ClipContext) -> str: ...


# ---------------------------------------------------------------------------------------------- describe


def short_label(label: str) -> str:
    """'cab, hack, taxi, taxicab' -> 'cab'; 'handrail / baluster' -> 'handrail'; lower case."""
    return label.split(",")[0].split(" / ")[0].strip().lower()


def with_article(noun: str) -> str:
    """The noun with its article ("an espresso", "a cab"); a plural, or a label that has its own article
    ('a cat having a striped coat', the tagger's name for a tiger cat), as it is."""
    if noun.startswith(("a ", "an ", "the ")):
        return noun
    if noun.endswith("s") and not noun.endswith(("ss", "us", "is")):  # jeans, sunglasses: no article
        return noun
    vowel = noun[:1] in "aeiou" and not noun.startswith(("uni", "use", "eu", "one"))
    return ("an " if vowel else "a ") + noun


def join_words(items: list[str], last: str = "and") -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def in_view(names: list[str]) -> str:
    """The sentence a caption starts with for the named people whose faces were seen in its clip ("Ana is in
    view."; "" for none). It is the faces stage's finding, not the captioner's, so every captioner's
    caption gets it the same way (`pipeline.stages`); it goes first, with what is seen, before any
    `HEARD` or `VISIBLE_TEXT` part a reader splits the caption at."""
    if not names:
        return ""
    return f"{join_words(names)} {'is' if len(names) == 1 else 'are'} in view."


def quote(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + "..."
    return f"'{text}'"


class DescribeCaptioner:
    """States what the tagger, OCR and speech recognition found; hedges, never invents.

    A label counts when some keyframe gives it at least `min_score`. Labels are merged across keyframes
    (by their first name) and ranked by their summed score; a label whose mean score over the clip's
    keyframes is below `sure_score` is said as "what looks like" with "(low confidence)".
    """

    needs_images = False  # whether the pipeline must decode keyframe pixels for it

    def __init__(self, min_score: float = 0.15, sure_score: float = 0.5, max_labels: int = 3, max_transcript_chars: int = 1000):
        self.min_score = min_score
        self.sure_score = sure_score
        self.max_labels = max_labels
        self.max_transcript_chars = max_transcript_chars

    def ranked_labels(self, ctx: ClipContext) -> list[tuple[str, float]]:
        """(short label, mean score over keyframes), best first, only labels that pass `min_score`."""
        total: dict[str, float] = {}
        peak: dict[str, float] = {}
        for frame in ctx.keyframes:
            best: dict[str, float] = {}  # one keyframe may carry two labels with the same first name
            for label, score in frame.tags:
                name = short_label(label)
                best[name] = max(best.get(name, 0.0), float(score))
            for name, score in best.items():
                total[name] = total.get(name, 0.0) + score
                peak[name] = max(peak.get(name, 0.0), score)
        n = max(1, len(ctx.keyframes))
        kept = sorted((name for name in total if peak[name] >= self.min_score), key=lambda k: (-total[k], k))
        return [(name, total[name] / n) for name in kept[: self.max_labels]]

    def caption(self, ctx: ClipContext) -> str:
        labels = self.ranked_labels(ctx)
        sure = [with_article(name) for name, mean in labels if mean >= self.sure_score]
        unsure = [with_article(name) for name, mean in labels if mean < self.sure_score]
        parts = []
        if sure:
            parts.append(f"I see {join_words(sure)}.")
        if unsure and sure:
            parts.append(f"There may also be {join_words(unsure, 'or')}{prompts.UNSURE}")
        elif unsure:
            parts.append(f"I see what looks like {join_words(unsure)}{prompts.UNSURE}")
        if not labels and (ctx.keyframes or not ctx.transcript.strip()):  # a voice note has no view to speak of
            parts.append("Nothing recognisable is in view.")
        if ctx.transcript.strip():
            heard = quote(ctx.transcript, self.max_transcript_chars)
            ends_sentence = heard[-2] in ".!?" and not heard.endswith("...'")  # an ellipsis still needs a full stop
            parts.append(prompts.HEARD + heard + ("" if ends_sentence else "."))
        texts = ctx.screen_texts()
        if texts:
            parts.append(prompts.VISIBLE_TEXT + ", ".join(quote(text, 200) for text in texts) + ".")
        return " ".join(parts)


# ---------------------------------------------------------------------------------- prompt and messages

IMAGE_MAX_SIDE = 512  # enough for a VLM's encoder (most resize to <= 448-768), small to send and encode


def jpeg_data_url(image: np.ndarray, max_side: int = IMAGE_MAX_SIDE, quality: int = 85) -> str:
    h, w = image.shape[:2]
    scale = max_side / max(h, w)
    if scale < 1:
        image = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise CaptionerError("a keyframe could not be encoded as JPEG")
    return "data:image/jpeg;base64," + base64.b64encode(data.tobytes()).decode("ascii")


def _tag_lines(ctx: ClipContext) -> str:
    lines = []
    for i, frame in enumerate(ctx.keyframes, 1):
        tags = ", ".join(f"{short_label(label)} {score:.2f}" for label, score in frame.tags) or "nothing recognised"
        lines.append(f"- keyframe {i}: {tags}")
    return "\n".join(lines) or "- no keyframes"


def build_messages(ctx: ClipContext, with_images: bool) -> list[dict[str, Any]]:
    """System + user messages. With images: content parts (text, then one image_url per keyframe);
    text-only: a plain string with the tags in place of the images (text-only chat templates reject
    content lists)."""
    frames = [f for f in ctx.keyframes if f.image is not None] if with_images else ctx.keyframes
    values = {
        "start": format_ts(ctx.start),
        "end": format_ts(ctx.end, with_date=False),
        "duration": f"{ctx.end - ctx.start:.0f}",
        "n_images": len(frames),
        "previous": ctx.previous_caption or "(none)",
        "transcript": quote(ctx.transcript, 2000) if ctx.transcript.strip() else "(no speech)",
        "ocr": ", ".join(quote(text, 200) for text in ctx.screen_texts()) or "(none)",
        "tags": _tag_lines(ctx),
    }
    wearer = ctx.wearer if ctx.wearer.strip() and ctx.wearer.strip() != "I" else "a person"
    system = {"role": "system", "content": prompts.render("caption_system", wearer=wearer)}
    if not with_images:
        return [system, {"role": "user", "content": prompts.render("caption_user_text", **values)}]
    parts: list[dict[str, Any]] = [{"type": "text", "text": prompts.render("caption_user", **values)}]
    parts += [{"type": "image_url", "image_url": {"url": jpeg_data_url(f.image)}} for f in frames]
    return [system, {"role": "user", "content": parts}]


def _reply_text(data: Any, where: str) -> str:
    try:
        text = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise CaptionerError(f"{where}: malformed response (no choices[0].message.content)") from None
    if not isinstance(text, str) or not text.strip():
        raise CaptionerError(f"{where}: the model returned an empty caption")
    return text.strip()


# ------------------------------------------------------------------------------------------------ server

# Statuses with which servers refuse image parts (llama.cpp with a text-only model: 500; vLLM,
# OpenAI-style validators: 400/422). Others (auth, not found, overload) are not about the images.
IMAGE_REJECT_STATUSES = {400, 415, 422, 500, 501}


class _ImagesRejected(Exception):
    pass


class ServerCaptioner:
    """An OpenAI-compatible /v1/chat/completions server. Sends keyframes as base64 JPEG data URLs;
    if the server refuses image parts it retries once text-only and keeps to text from then on."""

    needs_images = True  # whether the pipeline must decode keyframe pixels for it

    def __init__(self, url: str, model: str = "", timeout: float = 120.0, max_tokens: int = 300, transport: Any = None):
        if not url.strip():
            raise CaptionerError("the server captioner needs a server URL (Settings: Server URL)")
        self.server = ChatServer(url, timeout=timeout, transport=transport)
        self.endpoint = self.server.endpoint
        self.model = model
        self.max_tokens = max_tokens
        self.text_only = False

    def close(self) -> None:
        self.server.close()

    def caption(self, ctx: ClipContext) -> str:
        if self.text_only or not any(f.image is not None for f in ctx.keyframes):
            return self._ask(build_messages(ctx, with_images=False), images=False)
        try:
            return self._ask(build_messages(ctx, with_images=True), images=True)
        except _ImagesRejected as exc:
            log.info("%s refused image input (%s); retrying text-only, with frame tags in the prompt", self.endpoint, exc)
        text = self._ask(build_messages(ctx, with_images=False), images=False)
        self.text_only = True  # only once text worked: a passing server error must not switch images off
        return text

    def _ask(self, messages: list[dict[str, Any]], images: bool) -> str:
        body: dict[str, Any] = {"messages": messages, "max_tokens": self.max_tokens, "temperature": 0.2}
        if self.model:
            body["model"] = self.model
        try:
            data = self.server.post(body)
        except ServerError as exc:
            if images and exc.status in IMAGE_REJECT_STATUSES:
                raise _ImagesRejected(str(exc)) from exc
            raise CaptionerError(str(exc)) from exc
        return _reply_text(data, self.endpoint)


# --------------------------------------------------------------------------------------------------- vlm

# Settings names -> llama_cpp.llama_chat_format classes (0.3.36). "mtmd" uses the GGUF's own template.
CHAT_HANDLERS = {
    "mtmd": "MTMDChatHandler",
    "qwen2.5-vl": "Qwen25VLChatHandler",
    "llava-1.5": "Llava15ChatHandler",
    "llava-1.6": "Llava16ChatHandler",
    "minicpm-v-2.6": "MiniCPMv26ChatHandler",
    "moondream": "MoondreamChatHandler",
    "nanollava": "NanoLlavaChatHandler",
    "gemma4": "Gemma4ChatHandler",
    "llama3-vision-alpha": "Llama3VisionAlphaChatHandler",
}


def _existing(path: str | Path, what: str) -> Path:
    if not str(path).strip():
        raise CaptionerError(f"the VLM captioner needs {what}; none is set in Settings")
    path = Path(path).expanduser()
    if not path.is_file():
        raise CaptionerError(f"{what} not found: {path}")
    return path


class VlmCaptioner:
    """A local vision-language GGUF and its projector (mmproj) through llama-cpp-python.

    Both files are checked here, before anything loads; the model itself loads on the first caption.
    `n_ctx` leaves room for several keyframes (a few hundred tokens each) plus the prompt.
    """

    needs_images = True  # whether the pipeline must decode keyframe pixels for it

    def __init__(
        self,
        model_path: str | Path,
        mmproj_path: str | Path,
        chat_handler: str = "mtmd",
        threads: int = 2,
        n_ctx: int = 8192,
        max_tokens: int = 300,
    ):
        self.model_path = _existing(model_path, "a VLM model (GGUF)")
        self.mmproj_path = _existing(mmproj_path, "a VLM projector (mmproj GGUF)")
        if chat_handler not in CHAT_HANDLERS:
            raise CaptionerError(f"unknown VLM chat handler '{chat_handler}' (one of: {', '.join(CHAT_HANDLERS)})")
        self.chat_handler = chat_handler
        self.threads = threads
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self._llm = None

    def _load(self):
        if self._llm is None:
            try:
                from llama_cpp import Llama, llama_chat_format
            except ImportError as exc:
                raise CaptionerError(f"llama-cpp-python is not installed ({exc})") from exc
            try:
                handler = getattr(llama_chat_format, CHAT_HANDLERS[self.chat_handler])(
                    clip_model_path=str(self.mmproj_path), verbose=False
                )
                self._llm = Llama(
                    model_path=str(self.model_path), chat_handler=handler, n_ctx=self.n_ctx, n_threads=self.threads, verbose=False
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise CaptionerError(f"{self.model_path}: cannot load the VLM with {self.mmproj_path.name} ({exc})") from exc
        return self._llm

    def caption(self, ctx: ClipContext) -> str:
        with_images = any(f.image is not None for f in ctx.keyframes)
        try:
            reply = self._load().create_chat_completion(
                messages=build_messages(ctx, with_images), max_tokens=self.max_tokens, temperature=0.2
            )
        except (ValueError, RuntimeError) as exc:
            raise CaptionerError(f"{self.model_path}: captioning failed ({exc})") from exc
        return _reply_text(reply, str(self.model_path))


# ----------------------------------------------------------------------------------------------- factory


def _user_path(value: str, user_models: Path | None) -> str:
    """A bare file name or relative path is looked up in the library's models folder."""
    if value and user_models is not None and not Path(value).expanduser().is_absolute():
        return str(user_models / value)
    return value


def make_captioner(settings: Settings, user_models: Path | None = None) -> Captioner:
    if settings.captioner == "server":
        return ServerCaptioner(settings.server_url, settings.server_model, settings.server_timeout_s)
    if settings.captioner == "vlm":
        return VlmCaptioner(
            _user_path(settings.vlm_model_path, user_models),
            _user_path(settings.vlm_mmproj_path, user_models),
            threads=settings.threads,
        )
    return DescribeCaptioner()
