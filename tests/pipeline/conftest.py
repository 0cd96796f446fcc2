"""Fixtures of the pipeline tests: a library that imported the composite clip through the real stages."""

from __future__ import annotations

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
