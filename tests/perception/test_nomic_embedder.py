"""The default text embedder, nomic-embed-text-v1.5 from the manifest, in llama.cpp: unit vectors, the
query / document prefixes, batching that does not change a vector, Matryoshka dimensions."""

import numpy as np
import pytest

from egodesk.core.manifest import locate_file
from egodesk.perception.embedder import NOMIC_BATCH, NomicEmbedder, make_embedder


@pytest.fixture(scope="module")
def nomic():
    return make_embedder(threads=2)  # the default model


def test_the_default_embedder_is_nomic_with_unit_vectors(nomic):
    assert isinstance(nomic, NomicEmbedder) and nomic.model_id == "nomic-embed-text-v1.5-f16"
    docs = nomic.embed_documents(["I put the keys in the blue bowl by the door.", "Interest rates rose again in March."])
    assert docs.shape == (2, 768) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert nomic.embed_documents([]).shape == (0, 768)


def test_queries_and_documents_are_embedded_with_their_own_prefix(nomic):
    query = nomic.embed_queries(["where did I leave my keys?"])[0]
    docs = nomic.embed_documents(["I put the keys in the blue bowl by the door.", "Interest rates rose again in March."])
    assert docs[0] @ query > docs[1] @ query + 0.2
    same_text = nomic.embed_queries(["the blue bowl"])[0] @ nomic.embed_documents(["the blue bowl"])[0]
    assert same_text < 0.99  # a different prefix, a different vector


def test_a_vector_does_not_depend_on_its_batch(nomic):
    texts = [f"I open drawer number {i} and take out a spoon." for i in range(NOMIC_BATCH + 1)]
    texts[3] = "a short text"
    together = nomic.embed_documents(texts)
    alone = nomic.embed_documents(["a short text"])[0]
    assert float(alone @ together[3]) > 0.9999


def test_matryoshka_dimensions_are_layer_normed_prefixes(nomic):
    small = NomicEmbedder(locate_file("embedder-nomic"), dim=256)
    text = "I water the tomato plants on the balcony."
    cut = small.embed_documents([text])[0]
    assert small.model_id == "nomic-embed-text-v1.5-f16-256d" and cut.shape == (256,)
    full = nomic.embed_documents([text])[0]
    centred = (full - full.mean()) / full.std()
    expected = centred[:256] / np.linalg.norm(centred[:256])
    assert float(cut @ expected) > 0.9999
    with pytest.raises(ValueError, match="64 to 768"):
        NomicEmbedder(locate_file("embedder-nomic"), dim=1024)
