"""Who spoke when: speech turns, a voice embedding each, voices clustered within a footage and matched
across the library, and the wearer's own voice ("me").

The steps, each chosen for a CPU and measured on the test days (`benchmarks/diarization.py`,
docs/people.md):

1. Speech regions from the Silero VAD that faster-whisper bundles (already installed for the ASR, an
   ONNX file in its wheel; ~1 % of a core). Its pauses split turns; a change of speaker without a
   pause is found by step 2's windows.
2. Windows of `WINDOW_S` every `HOP_S` inside each region (a region shorter than a window is one
   window). Each window is brought to `LEVEL_DBFS` (the encoder reads mel *power*, not log-mel, so
   its input level matters; Resemblyzer's own preprocessing does the same to every utterance) and
   embedded by the voice encoder: Resemblyzer's GE2E LSTM, exported to ONNX (`voice_export`), the
   one complete speaker model the package registries hold (docs/people.md lists the others).
3. Within a footage, windows are clustered by average-linkage agglomeration on cosine distance, cut
   at `CLUSTER_DISTANCE` (calibrated on the clean test day, checked on the noisy one); a lone window
   whose two neighbours agree takes their label (a speaker does not change for 0.75 s and back).
   Consecutive windows of one label are one turn; each window owns the time up to the midpoints
   between its centre and its neighbours'. Two turns of one label with a pause under `JOIN_GAP_S`
   between them are one turn: the VAD splits a sentence at a breath, and the pause is the speaker's.
4. Across footage, `VoiceBook` keeps one centroid per known voice; a footage's cluster joins the
   closest voice at cosine similarity >= `LIBRARY_SIMILARITY`, else it is a new voice. It never
   merges two voices of one footage (two clusters kept apart within a footage are two people). The
   match is greedy, so its result depends on the order footage arrive: a voice first heard alone
   gathers another voice like it before the footage where both speak keeps them apart (the clean test
   day's wearer and Tom became one voice when footage were added newest first, as the job queue runs
   them: identity accuracy 0.68 against 0.90 oldest first). So the library's grouping is `regroup`:
   the match replayed over every footage's clusters in the order they were recorded, a function of
   the set of clusters alone, whatever order the footage arrived in. Voices a person decided (named,
   claimed, merged, split) are passed in as they stand: they keep their clusters and may gain others.
5. The wearer is the voice heard in the most footage (the camera is on the wearer, who talks in
   nearly every recording), the loudest of those on a tie (the wearer's mouth is closest to the mic).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16000
N_FFT = 400  # 25 ms windows, 10 ms hop, 40 bands: the encoder's training front end
HOP = 160
MEL_BANDS = 40
WINDOW_S = 1.5
HOP_S = 0.75
MIN_REGION_S = 0.3  # shorter VAD regions are clicks and breaths more often than words
JOIN_GAP_S = 0.5  # a shorter pause between two turns of one voice is inside one turn
LEVEL_DBFS = -30.0
CLUSTER_DISTANCE = 0.29  # the middle of the clean day's best span (0.28-0.30); the real day checks it
# Strict, since the two mistakes differ in cost: two people joined as one voice cannot be told apart again
# by naming it (the test days' library joined Sam, Anika and Mum at 0.75, and naming that voice "Mum"
# put her name on all three), while one person heard as two voices is one merge in the People panel.
# Both test days name people best from 0.82 to 0.85 (benchmarks/diarization.py --sweep); at 0.88 the
# noisy day's rooms split one person into many.
LIBRARY_SIMILARITY = 0.83
BATCH = 32
MODEL_FILE = "voice-encoder.onnx"


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    """The Slaney mel scale (linear below 1 kHz, logarithmic above): what the encoder was trained with."""
    hz = np.asarray(hz, dtype=np.float64)
    step = 200.0 / 3
    log_start, log_step = 1000.0 / step, np.log(6.4) / 27.0
    return np.where(hz < 1000.0, hz / step, log_start + np.log(np.maximum(hz, 1e-10) / 1000.0) / log_step)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    step = 200.0 / 3
    log_start, log_step = 1000.0 / step, np.log(6.4) / 27.0
    return np.where(mel < log_start, mel * step, 1000.0 * np.exp(log_step * (mel - log_start)))


def mel_filters() -> np.ndarray:
    """(MEL_BANDS, N_FFT // 2 + 1) triangular filters on the Slaney scale with Slaney area
    normalisation, 0 Hz to Nyquist (the usual defaults of the mel front end the encoder learned on)."""
    bins = np.linspace(0, SAMPLE_RATE / 2, N_FFT // 2 + 1)
    edges = _mel_to_hz(np.linspace(_hz_to_mel(np.array(0.0)), _hz_to_mel(np.array(SAMPLE_RATE / 2)), MEL_BANDS + 2))
    widths = np.diff(edges)
    ramps = edges[:, None] - bins[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    filters = np.maximum(0, np.minimum(lower, upper))
    filters *= (2.0 / (edges[2 : MEL_BANDS + 2] - edges[:MEL_BANDS]))[:, None]
    return filters.astype(np.float32)


_FILTERS = mel_filters()
_HANN = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)  # periodic


def mel_power(samples: np.ndarray) -> np.ndarray:
    """(frames, MEL_BANDS) mel power spectrogram, frames centred every HOP samples (zero-padded ends)."""
    padded = np.pad(samples.astype(np.float32), N_FFT // 2)
    count = 1 + (len(padded) - N_FFT) // HOP
    if count <= 0:
        return np.zeros((0, MEL_BANDS), np.float32)
    frames = np.lib.stride_tricks.as_strided(padded, (count, N_FFT), (padded.strides[0] * HOP, padded.strides[0]))
    power = np.abs(np.fft.rfft(frames * _HANN, axis=1)) ** 2
    return (power.astype(np.float32) @ _FILTERS.T).astype(np.float32)


def level_db(samples: np.ndarray) -> float:
    """RMS level in dB full scale (-120 for silence)."""
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
    return 20 * np.log10(max(rms, 1e-6))


def at_level(samples: np.ndarray, target_db: float = LEVEL_DBFS) -> np.ndarray:
    return samples * np.float32(10 ** ((target_db - level_db(samples)) / 20))


def speech_regions(samples: np.ndarray, min_silence_ms: int = 300) -> list[tuple[float, float]]:
    """(start, end) seconds of speech by the Silero VAD bundled with faster-whisper."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    options = VadOptions(min_silence_duration_ms=min_silence_ms, speech_pad_ms=100)
    spans = get_speech_timestamps(samples.astype(np.float32), options, sampling_rate=SAMPLE_RATE)
    regions = [(s["start"] / SAMPLE_RATE, s["end"] / SAMPLE_RATE) for s in spans]
    return [(a, b) for a, b in regions if b - a >= MIN_REGION_S]


def windows_in(regions: Sequence[tuple[float, float]]) -> list[tuple[int, float, float]]:
    """(region index, start, end) of the embedding windows: WINDOW_S every HOP_S, the last one ending
    at the region's end; a region shorter than WINDOW_S is one window."""
    out = []
    for index, (start, end) in enumerate(regions):
        if end - start <= WINDOW_S:
            out.append((index, start, end))
            continue
        count = int(np.ceil((end - start - WINDOW_S) / HOP_S)) + 1
        first = np.linspace(start, end - WINDOW_S, count)
        out.extend((index, float(a), float(a) + WINDOW_S) for a in first)
    return out


class VoiceEncoder:
    """256-d L2-normalised voice embeddings of audio pieces (ONNX Runtime on CPU)."""

    def __init__(self, model_dir: Path, threads: int = 1):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(Path(model_dir) / MODEL_FILE), options, providers=["CPUExecutionProvider"])

    def embed(self, pieces: Sequence[np.ndarray]) -> np.ndarray:
        """One embedding per piece of 16 kHz samples (each brought to LEVEL_DBFS first). Pieces are
        batched by their frame count: padding would run the LSTM over silence and change its last state."""
        mels = [mel_power(at_level(p)) for p in pieces]
        out = np.zeros((len(pieces), 256), np.float32)
        by_length: dict[int, list[int]] = {}
        for i, mel in enumerate(mels):
            by_length.setdefault(len(mel), []).append(i)
        for indices in by_length.values():
            for k in range(0, len(indices), BATCH):
                chunk = indices[k : k + BATCH]
                (result,) = self._session.run(None, {"mels": np.stack([mels[i] for i in chunk])})
                out[chunk] = result
        return out


@dataclass(frozen=True)
class SpeechTurn:
    start: float
    end: float
    label: int  # the footage's voice cluster
    level_db: float


@dataclass
class VoiceCluster:
    label: int
    centroid: np.ndarray  # mean of its windows' embeddings, L2-normalised
    seconds: float
    level_db: float  # speech-time-weighted mean RMS level of its turns


@dataclass
class Diarization:
    turns: list[SpeechTurn]
    clusters: list[VoiceCluster]


def _normalise(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-8)


def cluster_embeddings(embeddings: np.ndarray, distance: float = CLUSTER_DISTANCE) -> np.ndarray:
    """Cluster labels 0..k-1 (in order of first appearance) by average linkage on cosine distance."""
    if len(embeddings) == 0:
        return np.zeros(0, int)
    if len(embeddings) == 1:
        return np.zeros(1, int)
    from scipy.cluster.hierarchy import fcluster, linkage

    tree = linkage(_normalise(embeddings.astype(np.float64)), method="average", metric="cosine")
    raw = fcluster(tree, t=distance, criterion="distance")
    order = {c: i for i, c in enumerate(dict.fromkeys(raw.tolist()))}
    return np.array([order[c] for c in raw.tolist()])


def _smooth(labels: np.ndarray, regions_of: np.ndarray) -> np.ndarray:
    out = labels.copy()
    for i in range(1, len(labels) - 1):
        same_region = regions_of[i - 1] == regions_of[i] == regions_of[i + 1]
        if same_region and labels[i - 1] == labels[i + 1] != labels[i]:
            out[i] = labels[i - 1]
    return out


class Diarizer:
    def __init__(self, encoder: VoiceEncoder, distance: float = CLUSTER_DISTANCE):
        self.encoder = encoder
        self.distance = distance

    def diarize(self, samples: np.ndarray, regions: Sequence[tuple[float, float]] | None = None) -> Diarization:
        """Turns and voice clusters of one footage's 16 kHz mono samples (`regions`: speech spans if
        already known, e.g. the ASR's VAD; else found here)."""
        regions = speech_regions(samples) if regions is None else list(regions)
        windows = windows_in(regions)
        if not windows:
            return Diarization([], [])
        pieces = [samples[round(a * SAMPLE_RATE) : round(b * SAMPLE_RATE)] for _, a, b in windows]
        embeddings = self.encoder.embed(pieces)
        region_of = np.array([w[0] for w in windows])
        labels = _smooth(cluster_embeddings(embeddings, self.distance), region_of)
        return self._turns(samples, regions, windows, embeddings, labels)

    @staticmethod
    def _turns(samples, regions, windows, embeddings, labels) -> Diarization:
        spans: list[tuple[float, float, int]] = []
        for i, (region, start, end) in enumerate(windows):
            region_start, region_end = regions[region]
            before = windows[i - 1] if i and windows[i - 1][0] == region else None
            after = windows[i + 1] if i + 1 < len(windows) and windows[i + 1][0] == region else None
            centre = (start + end) / 2
            a = (centre + (before[1] + before[2]) / 2) / 2 if before else region_start
            b = (centre + (after[1] + after[2]) / 2) / 2 if after else region_end
            if spans and spans[-1][2] == labels[i] and (before or a - spans[-1][1] < JOIN_GAP_S):
                spans[-1] = (spans[-1][0], b, int(labels[i]))
            else:
                spans.append((a, b, int(labels[i])))
        turns = [
            SpeechTurn(a, b, label, level_db(samples[round(a * SAMPLE_RATE) : round(b * SAMPLE_RATE)])) for a, b, label in spans
        ]
        clusters = []
        for label in sorted(set(labels.tolist())):
            mine = [t for t in turns if t.label == label]
            seconds = sum(t.end - t.start for t in mine)
            level = sum(t.level_db * (t.end - t.start) for t in mine) / seconds if seconds else -120.0
            centroid = _normalise(embeddings[labels == label].mean(axis=0))
            clusters.append(VoiceCluster(label, centroid, seconds, level))
        return Diarization(turns, clusters)


@dataclass
class Voice:
    id: int
    total: np.ndarray  # seconds-weighted sum of its clusters' centroids
    seconds: float = 0.0
    footage: set[str] = field(default_factory=set)
    level_sum: float = 0.0  # seconds-weighted

    @property
    def centroid(self) -> np.ndarray:
        return _normalise(self.total)

    @property
    def level_db(self) -> float:
        return self.level_sum / self.seconds if self.seconds else -120.0


class VoiceBook:
    """The library's known voices, matched footage by footage (see the module's docstring, step 4)."""

    def __init__(self, similarity: float = LIBRARY_SIMILARITY):
        self.similarity = similarity
        self.voices: list[Voice] = []
        self._centroids = np.zeros((0, 0))  # the voices' centroids as rows, brought up to date by `add`

    def _rows(self) -> np.ndarray:
        """The centroids of `voices` as rows: those of voices appended since the last `add` are computed
        (`add` updates the rows of the voices it changes), so a long replay does not restack them all."""
        known = len(self._centroids)
        if known > len(self.voices) or (known and self._centroids.shape[1] != len(self.voices[0].total)):
            known, self._centroids = 0, np.zeros((0, 0))
        if known < len(self.voices):
            added = np.stack([v.centroid for v in self.voices[known:]]).astype(np.float64)
            self._centroids = np.concatenate([self._centroids, added]) if known else added
        return self._centroids

    def add(self, footage: str, diarization: Diarization) -> dict[int, int]:
        """Match a footage's clusters to voices (new ones where none is close); returns label -> voice id.
        Pairs are taken most similar first, one cluster per voice within a footage (a voice already heard
        in `footage` takes none: it is one of the footage's people already)."""
        clusters = diarization.clusters
        pairs = []
        if clusters and self.voices:
            scores = np.stack([c.centroid for c in clusters]).astype(np.float64) @ self._rows().T
            for i, j in zip(*np.nonzero(scores >= self.similarity)):
                if footage not in self.voices[j].footage:
                    pairs.append((float(scores[i, j]), clusters[i].label, self.voices[j].id))
        found: dict[int, int] = {}
        taken: set[int] = set()
        for _, label, voice_id in sorted(pairs, reverse=True):
            if label not in found and voice_id not in taken:
                found[label] = voice_id
                taken.add(voice_id)
        for cluster in diarization.clusters:
            if cluster.label not in found:
                self.voices.append(Voice(len(self.voices), np.zeros_like(cluster.centroid)))
                found[cluster.label] = self.voices[-1].id
            voice = self.voices[found[cluster.label]]
            weight = max(cluster.seconds, 1e-3)
            voice.total = voice.total + weight * cluster.centroid
            voice.seconds += weight
            voice.level_sum += weight * cluster.level_db
            voice.footage.add(footage)
        rows = self._rows()
        for voice_id in found.values():
            rows[voice_id] = self.voices[voice_id].centroid
        return found

    def wearer(self) -> int | None:
        """The voice heard in the most footage, the loudest on a tie (None before any speech)."""
        if not self.voices:
            return None
        return max(self.voices, key=lambda v: (len(v.footage), v.level_db)).id


def regroup(
    footage: Sequence[tuple[str, Sequence[VoiceCluster]]], kept: Sequence[Voice] = (), similarity: float = LIBRARY_SIMILARITY
) -> tuple[VoiceBook, dict[str, dict[int, int]]]:
    """The library's voices as a function of its footage's clusters (see the module's docstring, step 4):
    the `VoiceBook` match replayed over `footage` (name, clusters) in the order given, which is the order
    they were recorded, starting from the voices a person decided (`kept`: they are voices 0..len-1 of the
    book, with their clusters, and may gain more). Returns the book and, per footage, label -> voice id."""
    book = VoiceBook(similarity)
    book.voices = [Voice(i, v.total.copy(), v.seconds, set(v.footage), v.level_sum) for i, v in enumerate(kept)]
    found = {name: book.add(name, Diarization([], list(clusters))) for name, clusters in footage}
    return book, found
