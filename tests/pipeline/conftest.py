"""Fixtures of the pipeline tests: a library that imported the composite clip through the real stages."""

from __future__ import annotations

import os

import pytest

from egodesk.pipeline.library import Library


@pytest.fixture(scope="module")
def composite_library(tmp_path_factory, composite_clip):
    """(library, footage): the composite clip (walk video + JFK's speech) imported and indexed through the
    real stages. One per test module, since its tests change it; closed after the module."""
    library = Library(tmp_path_factory.mktemp("lib"))
    assert not library.add([composite_clip]).errors
    library.process()
    [footage] = library.footage()
    yield library, footage
    library.close()


def assert_no_file_holds(library: Library, name: bytes, prints: list[bytes]) -> None:
    """After a forget: the library closed, none of its files (database, WAL, indices, caches) holds the
    person's name (any case) or any of their prints, whole or a 64-byte piece of one."""
    library.close()
    files = [p for p in library.paths.root.rglob("*") if p.is_file()]
    assert any(p.name == "library.sqlite" for p in files) and any(p.parent.name == "indices" for p in files)
    for path in files:
        data = path.read_bytes()
        assert name not in data.lower(), path
        for blob in prints:
            assert blob not in data and blob[100:164] not in data, path
    assert os.path.getsize(library.paths.database) > 0
