import hashlib

from egodesk.media.hashing import content_hash
from tests.conftest import WALK_VIDEO


def test_hash_of_a_file_larger_than_a_block():
    assert content_hash(WALK_VIDEO) == hashlib.sha256(WALK_VIDEO.read_bytes()).hexdigest()


def test_hash_ignores_the_name(tmp_path):
    a, b, empty = tmp_path / "a.mp4", tmp_path / "copy of a.mp4", tmp_path / "empty"
    a.write_bytes(b"x" * 3000)
    b.write_bytes(b"x" * 3000)
    empty.write_bytes(b"")
    assert content_hash(a) == content_hash(b)
    assert content_hash(empty) == hashlib.sha256(b"").hexdigest()
