"""What makes the real test day as hard as a wearer's life: rooms, distance, phones and background noise
for the voices, and poor light, motion blur and things half in view for the pictures.

Each function is seeded and pure (numpy/scipy on arrays), so the day it renders is the same bytes on a
rerun. Noise is mixed at a signal-to-noise ratio against the scene's speech (`mix_at_snr`), the way
speech-in-noise test sets are made. Rooms are set at the mild end of real ones (a living room's
reverberation, a street's distance): espeak-ng's synthetic voices lose more to reverberation than people's
do, and at harsher settings whole lines of the people the wearer talks to were lost to recognition (WER
0.65-0.88 for them), which no later stage can recover and a wearer's recordings do not show.
"""

from __future__ import annotations

import numpy as np
from scipy import signal

RATE = 22050  # espeak-ng's sample rate, the rate the test day's tracks are mixed at

# How a voice reaches the wearer's camera microphone.
ROOMS = ("near", "room", "far", "phone")
NOISES = ("", "office", "kitchen", "street", "cafe")


def _impulse_response(rt60: float, direct: float, seed: int) -> np.ndarray:
    """A room's impulse response: the direct sound, then a tail of exponentially decaying noise that
    falls by 60 dB in `rt60` seconds (the standard synthetic reverberation model)."""
    rng = np.random.default_rng(seed)
    n = int(rt60 * RATE)
    t = np.arange(n) / RATE
    tail = rng.normal(0, 1, n) * np.exp(-6.9 * t / rt60)
    tail[: int(0.004 * RATE)] = 0.0  # the first reflections arrive a few milliseconds after the direct sound
    tail *= (1 - direct) / np.sqrt(np.sum(tail**2))
    tail[0] = direct
    return tail.astype(np.float32)


def through(samples: np.ndarray, room: str, seed: int) -> np.ndarray:
    """A voice as the camera hears it: `near` (the wearer) dry; `room` a metre or two away in a room;
    `far` across a room or a street (more reverberation, quieter, duller); `phone` through a phone's
    loudspeaker (telephone band, a little clipping)."""
    if room == "near":
        return samples
    if room == "phone":
        sos = signal.butter(4, (300, 3400), btype="bandpass", fs=RATE, output="sos")
        band = signal.sosfilt(sos, samples)
        return (0.6 * np.tanh(2.5 * band)).astype(np.float32)
    if room not in ("room", "far"):
        raise ValueError(f"unknown room {room!r} (one of {', '.join(ROOMS)})")
    rt60, direct, gain = (0.35, 0.75, 0.8) if room == "room" else (0.55, 0.5, 0.55)
    wet = signal.fftconvolve(samples, _impulse_response(rt60, direct, seed))[: len(samples)]
    if room == "far":
        wet = signal.sosfilt(signal.butter(2, 3800, fs=RATE, output="sos"), wet)
    return (gain * wet / max(1e-6, np.max(np.abs(wet))) * np.max(np.abs(samples))).astype(np.float32)


def _clinks(n: int, rng: np.random.Generator, per_second: float) -> np.ndarray:
    """Cups, cutlery and plates: short decaying tones at random moments."""
    out = np.zeros(n, np.float32)
    length = int(0.25 * RATE)
    t = np.arange(length) / RATE
    for start in rng.integers(0, max(1, n - length), int(per_second * n / RATE)):
        tone = np.sin(2 * np.pi * rng.uniform(1800, 5200) * t) * np.exp(-t * rng.uniform(18, 40))
        out[start : start + length] += rng.uniform(0.3, 1.0) * tone.astype(np.float32)
    return out


def _coloured(n: int, rng: np.random.Generator, cutoff: float) -> np.ndarray:
    """Broadband noise low-passed at `cutoff` Hz: fans, extractor hoods, traffic rumble, running water."""
    return signal.sosfilt(signal.butter(2, cutoff, fs=RATE, output="sos"), rng.normal(0, 1, n)).astype(np.float32)


def background(kind: str, n: int, seed: int, street: np.ndarray, babble: np.ndarray) -> np.ndarray:
    """`n` samples of a place's sound at an arbitrary level (`mix_at_snr` sets it): `office` (a fan),
    `kitchen` (extractor hum, a tap, clinks), `street` (the walk footage's own recorded street sound),
    `cafe` (other people talking, `babble`, with cups and plates)."""
    rng = np.random.default_rng(seed)
    if kind == "office":
        return _coloured(n, rng, 600)
    if kind == "kitchen":
        tap = _coloured(n, rng, 6000) * (np.sin(np.linspace(0, 3 * np.pi, n)) > 0.6)
        return _coloured(n, rng, 250) + 0.5 * tap + 0.8 * _clinks(n, rng, 0.6)
    if kind == "street":
        return np.roll(np.resize(street, n), int(rng.integers(0, max(1, len(street)))))
    if kind == "cafe":
        return np.roll(np.resize(babble, n), int(rng.integers(0, max(1, len(babble))))) + 0.4 * _clinks(n, rng, 1.2)
    raise ValueError(f"unknown background {kind!r} (one of {', '.join(NOISES[1:])})")


def speech_level(speech: np.ndarray) -> float:
    """The RMS of the speech where someone is talking (frames above a fortieth of the loudest), so a
    scene's pauses do not lower the level the noise is set against."""
    frames = speech[: len(speech) // 512 * 512].reshape(-1, 512)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    active = rms[rms > rms.max() / 40] if rms.size and rms.max() > 0 else rms
    return float(np.sqrt(np.mean(active**2))) if active.size else 0.0


def mix_at_snr(noise: np.ndarray, level: float, snr_db: float) -> np.ndarray:
    """`noise` scaled so that speech at RMS `level` stands `snr_db` decibels above it."""
    rms = float(np.sqrt(np.mean(noise**2))) or 1.0
    return (noise * (level / 10 ** (snr_db / 20) / rms)).astype(np.float32)


def degrade(frame: np.ndarray, light: float, blur: int, angle: float, rng: np.random.Generator) -> np.ndarray:
    """A frame as a small camera takes it: `light` < 1 darkens it (with the sensor noise a dark scene
    brings), `blur` > 1 smears it along `angle` (degrees) over that many pixels (head movement)."""
    import cv2

    out = frame.astype(np.float32)
    if blur > 1:
        kernel = np.zeros((blur, blur), np.float32)
        kernel[blur // 2, :] = 1.0 / blur
        rotation = cv2.getRotationMatrix2D((blur / 2 - 0.5, blur / 2 - 0.5), angle, 1.0)
        kernel = cv2.warpAffine(kernel, rotation, (blur, blur))
        out = cv2.filter2D(out, -1, kernel / max(1e-6, kernel.sum()))
    if light < 1:
        out = 255 * (out / 255) ** 1.3 * light + rng.normal(0, 6 * (1 - light), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)
