"""Search on real footage as it is indexed: the composite clip (walk video + JFK's speech) through the
real stages, searched from a second connection while the import runs and after it."""

from __future__ import annotations

import pytest

from egodesk.pipeline.library import Library


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, composite_clip):
    """The library after a real import, and what a second opening of it found for "country" as each
    stage began (the writer mid-import; WAL lets a reader see each finished stage)."""
    root = tmp_path_factory.mktemp("lib")
    library = Library(root)
    assert not library.add([composite_clip]).errors
    reader = Library(root)
    seen: dict[str, list[str]] = {}

    def progress(event) -> None:
        if event.stage not in seen:
            seen[event.stage] = [h.kind for h in reader.search("country").hits]

    library.process(progress=progress)
    yield library, seen
    reader.close()
    library.close()


def test_speech_is_searchable_before_the_import_ends(indexed):
    _, seen = indexed
    assert seen["asr"] == []  # nothing heard yet as the recogniser starts
    assert "speech" in seen["keyframes"]  # the transcript is searchable while the frames are being read


def test_speech_tags_and_captions_are_found_with_their_words_marked(indexed):
    library, _ = indexed
    [speech] = [h for h in library.search('"your country"').hits if h.kind == "speech"]
    assert speech.title and 0 <= speech.offset < 11 and [w.lower() for w in speech.words] == ["your country"] * 2
    [clip] = library.clips(speech.footage_id)
    tag = clip.tags[0][0]
    assert "tags" in {h.kind for h in library.search(tag).hits}
    assert library.search("countrie ").hits  # misspelt: spelled alike
