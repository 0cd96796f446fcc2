"""The models a worker needs, loaded lazily once per process and shared by every stage."""

from __future__ import annotations

from functools import cached_property

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings


class Engines:
    def __init__(self, settings: Settings, paths: LibraryPaths, store):
        self.settings = settings
        self.paths = paths
        self.store = store

    @cached_property
    def transcriber(self):
        from egodesk.perception.asr import make_transcriber

        return make_transcriber(self.settings, self.paths.user_models)

    @cached_property
    def tagger(self):
        from egodesk.perception.tagger import make_tagger

        return make_tagger(self.settings, self.paths.user_models)

    @cached_property
    def text_reader(self):
        from egodesk.perception.ocr import TextReader

        return TextReader()

    @cached_property
    def captioner(self):
        from egodesk.perception.captioner import make_captioner

        return make_captioner(self.settings, self.paths.user_models)

    @cached_property
    def diarizer(self):
        from egodesk.core.manifest import locate
        from egodesk.perception.diarize import Diarizer, VoiceEncoder

        return Diarizer(VoiceEncoder(locate("voice", self.paths.user_models), threads=self.settings.threads))

    @cached_property
    def face_finder(self):
        from egodesk.core.manifest import locate
        from egodesk.perception.faces import FaceFinder

        return FaceFinder(locate("faces", self.paths.user_models))

    @cached_property
    def embedder(self):
        """The embedder whose vectors the library holds: questions and new memories must match them.
        It is the settings' choice except while a library built with another is being re-embedded."""
        from egodesk.memory.reembed import library_role

        role = library_role(self.store, self.settings.embedder_model)
        return self.target_embedder if role == self.settings.embedder_model else self._load_embedder(role)

    @cached_property
    def target_embedder(self):
        """The embedder the settings choose (the one a re-embedding moves the library to)."""
        return self._load_embedder(self.settings.embedder_model)

    def _load_embedder(self, role: str):
        from egodesk.perception.embedder import make_embedder

        return make_embedder(self.settings.threads, self.paths.user_models, role)

    def embedder_changed(self) -> None:
        """After a re-embedding swapped the library's vectors: pick the embedder again."""
        self.__dict__.pop("embedder", None)

    def embedder_stale(self) -> bool:
        """Whether the library's vectors are now another embedder's than the one loaded here (a
        re-embedding finished in another process: this one's embedder and indices are the old ones)."""
        from egodesk.memory.reembed import library_model

        loaded, model = self.__dict__.get("embedder"), library_model(self.store)
        return loaded is not None and model is not None and model != loaded.model_id

    @cached_property
    def llm(self):
        from egodesk.perception.llm import make_llm

        return make_llm(self.settings, self.paths.user_models)

    @cached_property
    def index_manager(self):
        from egodesk.memory.indices import IndexManager

        return IndexManager(self.store, self.paths.indices)
