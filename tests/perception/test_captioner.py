"""Captioners: the tag-based default (pinned texts), the VLM slot's checks, and the server protocol
against a mock transport, a closed port and a real llama_cpp.server."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest

from egodesk.core.manifest import locate_file
from egodesk.core.settings import Settings
from egodesk.perception.captioner import (
    CaptionerError,
    ClipContext,
    DescribeCaptioner,
    Keyframe,
    ServerCaptioner,
    VlmCaptioner,
    build_messages,
    make_captioner,
    short_label,
    with_article,
)
from egodesk.perception.chat_server import chat_endpoint
from egodesk.perception.tagger import make_tagger
from tests.perception.test_tagger import walk_frames

T0 = 1_700_000_000.0
JFK = "And so, my fellow Americans, ask not what your country can do for you"


def ctx(*frames: Keyframe, transcript: str = "", **kw) -> ClipContext:
    return ClipContext(start=T0, end=T0 + 15, keyframes=list(frames), transcript=transcript, **kw)


# ------------------------------------------------------------------------------------------- describe


def test_describe_pins_tags_speech_and_text():
    clip = ctx(
        Keyframe(None, [("street sign", 0.62), ("crosswalk", 0.2)], "EXIT"),
        Keyframe(None, [("street sign", 0.71), ("cab, hack, taxi, taxicab", 0.3)], "EXIT\nPlatform 4"),
        transcript=JFK + "...",
    )
    assert DescribeCaptioner().caption(clip) == (
        "I see a street sign. There may also be a cab or a crosswalk (low confidence). "
        f"I hear: '{JFK}...'. Visible text: 'EXIT', 'Platform 4'."
    )


def test_describe_hedges_low_scores_and_drops_noise():
    clip = ctx(
        Keyframe(None, [("street sign", 0.3), ("crosswalk", 0.25), ("tench", 0.05)]),
        Keyframe(None, [("street sign", 0.2), ("crosswalk", 0.3), ("umbrella", 0.1)]),
    )
    assert DescribeCaptioner().caption(clip) == "I see what looks like a crosswalk and a street sign (low confidence)."


def test_describe_merges_names_orders_by_total_and_caps():
    clip = ctx(
        Keyframe(None, [("handrail / baluster", 0.9), ("handrail", 0.4), ("espresso", 0.5), ("jeans", 0.2)]),
        Keyframe(None, [("espresso", 0.6), ("umbrella", 0.55), ("jeans", 0.2)]),
    )
    # espresso 1.1 > handrail 0.9 (one keyframe's two handrail labels count once) > umbrella 0.55 > jeans 0.4
    assert DescribeCaptioner().caption(clip) == (
        "I see an espresso. There may also be a handrail or an umbrella (low confidence)."
    )
    assert short_label("Standard Poodle") == "standard poodle"


def test_describe_when_nothing_passes():
    describe = DescribeCaptioner()
    assert describe.caption(ctx()) == "Nothing recognisable is in view."
    assert describe.caption(ctx(Keyframe(None, [("tench", 0.05)]), transcript="Hello there?")) == (
        "Nothing recognisable is in view. I hear: 'Hello there?'"
    )
    long = describe.caption(ctx(transcript="word " * 400))
    assert long.endswith("...'.") and len(long) < 1100
    assert describe.caption(ctx(transcript="Buy milk.")) == "I hear: 'Buy milk.'"  # a voice note: no view to speak of


def test_describe_on_real_walk_keyframes():
    tagger = make_tagger(Settings(threads=2))
    frames = walk_frames([30, 150, 280])
    probs = tagger.analyse(frames).probs
    keyframes = [Keyframe(f, tagger.top_labels(p, 5)) for f, p in zip(frames, probs)]
    caption = DescribeCaptioner().caption(ctx(*keyframes, transcript=JFK))
    print("\n" + caption)
    assert caption.startswith("I see") and "Nothing recognisable" not in caption
    assert "patio" in caption and f"I hear: '{JFK}'." in caption
    assert caption == DescribeCaptioner().caption(ctx(*keyframes, transcript=JFK))  # deterministic


# ------------------------------------------------------------------------------------------ prompt, vlm


def test_prompt_messages_with_and_without_images():
    frame = Keyframe(np.zeros((480, 848, 3), np.uint8), [("patio", 0.4)], "EXIT")
    clip = ctx(frame, frame, transcript=JFK, wearer="Jake", previous_caption="I leave the office.")
    system, user = build_messages(clip, with_images=True)
    assert "Jake" in system["content"] and "Episodic" in system["content"] and "Goal-oriented" in system["content"]
    assert [p["type"] for p in user["content"]] == ["text", "image_url", "image_url"]
    assert user["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    text = user["content"][0]["text"]
    assert JFK in text and "EXIT" in text and "I leave the office." in text and "2023-11-14 22:13:20" in text
    _, plain = build_messages(clip, with_images=False)
    assert isinstance(plain["content"], str) and "keyframe 2: patio 0.40" in plain["content"]


def test_vlm_checks_its_files_before_loading(tmp_path):
    model = tmp_path / "vlm.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(CaptionerError, match="mmproj-missing.gguf"):
        VlmCaptioner(model, tmp_path / "mmproj-missing.gguf")
    with pytest.raises(CaptionerError, match="projector"):
        VlmCaptioner(model, "")
    with pytest.raises(CaptionerError, match="no-model.gguf"):
        VlmCaptioner(tmp_path / "no-model.gguf", model)
    with pytest.raises(CaptionerError, match="unknown VLM chat handler"):
        VlmCaptioner(model, model, chat_handler="clip-9000")


def test_vlm_with_a_broken_projector_fails_cleanly(tmp_path):
    """A real (text-only) GGUF with a corrupt mmproj: a CaptionerError naming the projector, no crash."""
    mmproj = tmp_path / "broken-mmproj.gguf"
    mmproj.write_bytes(bytes(range(256)) * 16)
    vlm = VlmCaptioner(locate_file("llm-test"), mmproj, threads=2, n_ctx=1024)
    with pytest.raises(CaptionerError, match="broken-mmproj.gguf"):
        vlm.caption(ctx(Keyframe(np.zeros((64, 64, 3), np.uint8), [("patio", 0.5)])))


def test_factory(tmp_path):
    assert isinstance(make_captioner(Settings()), DescribeCaptioner)
    with pytest.raises(CaptionerError, match="Server URL"):
        make_captioner(Settings(captioner="server"))
    with pytest.raises(CaptionerError, match=str(tmp_path / "vlm.gguf")):  # relative names: user's models folder
        make_captioner(Settings(captioner="vlm", vlm_model_path="vlm.gguf", vlm_mmproj_path="p.gguf"), tmp_path)
    server = make_captioner(Settings(captioner="server", server_url="http://127.0.0.1:9/v1"))
    assert server.endpoint == "http://127.0.0.1:9/v1/chat/completions"
    assert chat_endpoint("http://h:1") == chat_endpoint("http://h:1/v1/") == chat_endpoint("http://h:1/v1/chat/completions")


# ------------------------------------------------------------------------------- server: mock transport


def reply(text):
    return httpx.Response(200, json={"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})


def test_server_falls_back_to_text_once_images_are_refused(caplog):
    seen = []

    def handle(request: httpx.Request) -> httpx.Response:
        content = json.loads(request.content)["messages"][1]["content"]
        seen.append("images" if isinstance(content, list) else "text")
        if isinstance(content, list):
            return httpx.Response(500, json={"error": {"message": 'can only concatenate str (not "list") to str'}})
        return reply("  I walk along a sidewalk.  ")

    captioner = ServerCaptioner("http://llm.local/v1", "m", transport=httpx.MockTransport(handle))
    clip = ctx(Keyframe(np.zeros((60, 80, 3), np.uint8), [("patio", 0.4)]))
    with caplog.at_level(logging.INFO, logger="egodesk.perception.captioner"):
        assert captioner.caption(clip) == "I walk along a sidewalk."
        assert captioner.caption(clip) == "I walk along a sidewalk."
    assert seen == ["images", "text", "text"]  # once refused, images are not sent again
    assert any("refused image input" in r.getMessage() and r.levelno == logging.INFO for r in caplog.records)


def test_server_error_on_both_tries_keeps_images_on():
    captioner = ServerCaptioner(
        "http://llm.local/v1", transport=httpx.MockTransport(lambda request: httpx.Response(500, text="out of memory"))
    )
    with pytest.raises(CaptionerError, match="HTTP 500 \\(out of memory\\)"):
        captioner.caption(ctx(Keyframe(np.zeros((60, 80, 3), np.uint8))))
    assert not captioner.text_only


@pytest.mark.parametrize(
    "response, reason",
    [
        (httpx.Response(404, json={"error": {"message": "no such route"}}), "HTTP 404 (no such route)"),
        (httpx.Response(200, text="<html>proxy</html>"), "malformed response (not JSON)"),
        (httpx.Response(200, json={"choices": []}), "malformed response"),
        (reply("   "), "empty caption"),
    ],
)
def test_server_errors_name_the_url_and_reason(response, reason):
    captioner = ServerCaptioner("http://llm.local:8080", transport=httpx.MockTransport(lambda request: response))
    with pytest.raises(CaptionerError) as error:
        captioner.caption(ctx(transcript="hello"))
    assert "http://llm.local:8080/v1/chat/completions" in str(error.value) and reason in str(error.value)


def test_server_timeout_is_reported():
    def slow(request):
        raise httpx.ReadTimeout("timed out", request=request)

    captioner = ServerCaptioner("http://llm.local/v1", timeout=3, transport=httpx.MockTransport(slow))
    with pytest.raises(CaptionerError, match="no answer within 3 s"):
        captioner.caption(ctx())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_closed_port_fails_fast():
    captioner = ServerCaptioner(f"http://127.0.0.1:{free_port()}/v1", timeout=30)
    started = time.perf_counter()
    with pytest.raises(CaptionerError, match="cannot connect"):
        captioner.caption(ctx(transcript="hello"))
    assert time.perf_counter() - started < 5


# ---------------------------------------------------------------------------- server: real llama.cpp


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """llama_cpp.server with the tiny test GGUF on a free loopback port (a text-only model)."""
    port = free_port()
    log_file = open(tmp_path_factory.mktemp("server") / "server.log", "w+")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(locate_file("llm-test")),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "2",
        ],
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                log_file.seek(0)
                pytest.fail(f"llama_cpp.server exited with {process.returncode}: {log_file.read()[-2000:]}")
            try:
                if httpx.get(url + "/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not become ready within 60 s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log_file.close()


def _walk_clip() -> ClipContext:
    frames = walk_frames([30, 280])
    return ctx(*(Keyframe(f, [("patio", 0.45), ("lakeshore", 0.2)], "EXIT") for f in frames), transcript=JFK)


@pytest.mark.slow  # ~5 s on an idle machine, 15-50 s while other work shares the 2 cores (prompt ~570 tokens)
def test_real_server_refuses_images_then_answers_text(llama_server, caplog):
    """The real protocol and the text-only fallback, with a one-token answer (the mock-transport tests
    above are the fast variant)."""
    captioner = ServerCaptioner(llama_server, timeout=120, max_tokens=1)
    with caplog.at_level(logging.INFO, logger="egodesk.perception.captioner"):
        assert captioner.caption(_walk_clip())
    assert captioner.text_only
    assert any("refused image input" in r.getMessage() for r in caplog.records)
    captioner.close()


@pytest.mark.slow
def test_real_server_full_caption(llama_server):
    captioner = ServerCaptioner(llama_server, timeout=300, max_tokens=80)
    started = time.perf_counter()
    caption = captioner.caption(_walk_clip())
    print(f"\nserver caption in {time.perf_counter() - started:.1f} s: {caption!r}")
    assert len(caption.split()) >= 5 and captioner.text_only
    captioner.close()


@pytest.mark.slow
def test_real_server_answers_the_requests_a_memory_build_keeps_in_flight(llama_server):
    """llama_cpp.server reports no slots (no /props): the default number of requests goes out at once,
    and every one is answered (the server queues them)."""
    from concurrent.futures import ThreadPoolExecutor

    from egodesk.perception.chat_server import DEFAULT_IN_FLIGHT
    from egodesk.perception.llm import ServerLLM

    llm = ServerLLM(llama_server, timeout=300)
    assert llm.in_flight == DEFAULT_IN_FLIGHT
    prompts = [[{"role": "user", "content": f"Say a word about the number {n}."}] for n in range(llm.in_flight)]
    with ThreadPoolExecutor(llm.in_flight) as pool:
        replies = list(pool.map(lambda messages: llm.chat(messages, max_tokens=2), prompts))
    llm.close()
    assert all(prompt_tokens > 0 for _, prompt_tokens in replies)


def test_a_label_with_its_own_article_or_a_plural_gets_none_added():
    assert [with_article(n) for n in ("espresso", "cab", "a cat having a striped coat", "sunglasses")] == [
        "an espresso",
        "a cab",
        "a cat having a striped coat",
        "sunglasses",
    ]
