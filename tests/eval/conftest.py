import pytest

from egodesk.perception.embedder import make_embedder


@pytest.fixture(scope="session")
def embedder():
    return make_embedder()
