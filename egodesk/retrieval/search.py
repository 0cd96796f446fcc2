"""Search as you type: the words and phrases of a query found in every text of the library (what was said,
on-screen text, tags, captions, memories) through the FTS5 index of `memory.textsearch`.

The rules, and why:
- A quoted phrase matches those words in that order, exactly (case and accents aside): the user quoted it
  to say so. An unclosed quote runs to the end of the query (it is still being typed, so its last word
  also matches as a word's start).
- Any other word also matches the library's words heard or spelled alike (`core.soundalike.alike`) and
  its other forms (`core.words.lemma`: "took" finds "take"), since the recogniser wrote "pointment" for
  "appointment"; every word must match (AND), so more words narrow the hits.
- The person's own words (Settings > Vocabulary: names, places) are the right spellings: a query word that
  is one of them or alike one (typed "Catrina" for "Katrina") also matches that word and the library's
  words alike it, as the recogniser may have written it either way.
- The last word, while typed (the query does not end in a space or quote), also matches as the start of
  a word: "umbr" already finds "umbrella".
- Common words ("the", "I") are dropped unless the query holds nothing else: they would match most rows.
- The query is never handed to FTS5 as written: each word is quoted, so FTS5's own syntax (NEAR, AND,
  *, parentheses, column filters) in the text is only words.
- Hits come grouped by footage (in time order) and by time within each; each carries the spans of its
  matching words. A query matching more than `RANK_MAX` rows takes the newest rows rather than ranking
  them all (BM25 over 80k rows costs ~80 ms at 200 hours); one matching fewer takes the best ranked.

The alike words come from the index's vocabulary, read again when the index has changed (an import is
running) but at most every `VOCAB_REFRESH_S`, so a search never waits on more than one reading of it.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import text

from egodesk.core.soundalike import MIN_KEY, MIN_SPELLED, PART_SHARE, SPELLED_SIMILARITY, sound_key, spelled_alike
from egodesk.core.words import STOPWORDS, lemma
from egodesk.memory.store import Store
from egodesk.memory.textsearch import TABLE, VOCAB_TABLE

RANK_MAX = 20_000  # rows a query may match and still be ranked by BM25
MAX_ALIKE = 24  # alike words a query word may add (the most frequent first)
MIN_PREFIX = 2  # letters a word being typed needs before it matches as a word's start
VOCAB_REFRESH_S = 5.0  # the vocabulary is read again at most this often while the index changes
_MARK_START, _MARK_END = "\x02", "\x03"
_WORD = re.compile(r"[^\W_]+")  # letters and digits: the FTS5 unicode61 tokenizer's tokens


@dataclass
class Terms:
    """A query as the rules read it: exact phrases, words to match loosely, and the word still typed."""

    phrases: list[list[str]] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    typing: str = ""  # the last loose word, matched as a word's start too ("" when it is finished)
    open_phrase: bool = False  # the last phrase is still typed: its last word matches as a word's start

    @property
    def empty(self) -> bool:
        return not self.phrases and not self.words


@dataclass
class SearchHit:
    footage_id: int
    title: str
    clip_id: int | None
    kind: str  # speech | screen | tags | caption | memory
    start: float  # epoch seconds
    end: float
    offset: float  # seconds into the footage file
    text: str
    marks: list[tuple[int, int]]  # [start, end) character spans of the matching words in `text`

    @property
    def words(self) -> list[str]:
        return [self.text[a:b] for a, b in self.marks]


@dataclass
class SearchResult:
    query: str
    hits: list[SearchHit]
    more: bool = False  # more rows matched than were returned
    alike: dict[str, list[str]] = field(default_factory=dict)  # a query word -> the other library words it matched
    indexing: int = 0  # footage whose indexing is unfinished: their hits so far are included


def words_of(text_: str) -> list[str]:
    """Lower-case, accent-free words, split as the index splits them."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text_) if not unicodedata.combining(c))
    return _WORD.findall(plain.casefold())


def parse(query: str) -> Terms:
    """Quoted phrases, the other words (common ones dropped when anything else remains) and the word typed."""
    parts = query.split('"')
    phrases = [words for words in (words_of(p) for p in parts[1::2]) if words]
    loose = [w for p in parts[0::2] for w in words_of(p)]
    last = parts[-1]
    typed = bool(words_of(last)) and not last[-1].isspace()  # the query ends inside a word
    in_phrase = len(parts) % 2 == 0  # an odd number of quotes: the last phrase is open
    typing = loose[-1] if typed and not in_phrase and len(loose[-1]) >= MIN_PREFIX else ""
    kept = [w for w in loose if w not in STOPWORDS]
    words = list(dict.fromkeys(kept if kept or phrases else loose))
    if typing not in words:
        typing = ""  # dropped as a common word
    return Terms(phrases, words, typing, typed and in_phrase and len(phrases[-1][-1]) >= MIN_PREFIX)


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


class Vocabulary:
    """The index's words grouped for finding the ones alike a query word, without comparing it with each."""

    def __init__(self, counts: dict[str, int]):
        self.counts = counts
        self.by_key: dict[str, list[str]] = defaultdict(list)
        self.by_lemma: dict[str, list[str]] = defaultdict(list)
        self.by_length: dict[int, list[tuple[str, frozenset[str]]]] = defaultdict(list)
        for word in counts:
            key = sound_key(word)
            if len(key) >= MIN_KEY:
                self.by_key[key].append(word)
            self.by_lemma[lemma(word)].append(word)
            if len(word) >= MIN_SPELLED:
                self.by_length[len(word)].append((word, frozenset(word)))
        self._cache: dict[str, list[str]] = {}

    def alike(self, word: str) -> list[str]:
        """The index's words other than `word` that share its lemma, its sound key (when long enough) or
        are spelled alike (`spelled_alike`), most frequent first, at most MAX_ALIKE."""
        if word not in self._cache:
            found = set(self.by_lemma.get(lemma(word), ()))
            key = sound_key(word)
            if len(key) >= MIN_KEY:
                found.update(self.by_key.get(key, ()))
            if len(word) >= MIN_SPELLED:
                found.update(self._spelled(word))
            found.discard(word)
            self._cache[word] = sorted(found, key=lambda w: (-self.counts[w], w))[:MAX_ALIKE]
        return self._cache[word]

    def _spelled(self, word: str) -> list[str]:
        """Words spelled alike: only lengths the part or edit tests allow, and for the edit test only words
        whose letter sets differ by at most two per edit allowed (one edit changes at most two)."""
        letters = frozenset(word)
        n = len(word)
        out = []
        for length in range(max(MIN_SPELLED, int(PART_SHARE * n)), int(n / PART_SHARE) + 1):
            edits = int((1 - SPELLED_SIMILARITY) * max(n, length) + 1e-9)
            for other, other_letters in self.by_length.get(length, ()):
                short, long = sorted((word, other), key=len)
                part = long.startswith(short) or long.endswith(short)
                if (part or len(letters ^ other_letters) <= 2 * edits) and spelled_alike(word, other):
                    out.append(other)
        return out


class TextSearch:
    """Searches one library's text index; keeps the index's vocabulary between searches."""

    def __init__(self, store: Store, known: Callable[[], list[str]] = list):
        """`known` gives the person's vocabulary (names, places, words), read at each search so a change in
        the settings counts at once."""
        self.store = store
        self.known = known
        self._known: tuple[tuple[str, ...], Vocabulary] = ((), Vocabulary({}))
        self._vocabulary: Vocabulary | None = None
        self._stamp: bytes | None = None
        self._read_at = 0.0
        self._lock = threading.Lock()

    def vocabulary(self, conn) -> Vocabulary:
        """The index's words and their row counts, read again when the index has changed since (its FTS5
        structure record differs) and VOCAB_REFRESH_S have passed."""
        with self._lock:
            now = time.monotonic()
            if self._vocabulary is None or now - self._read_at >= VOCAB_REFRESH_S:
                stamp = conn.execute(text(f"SELECT block FROM {TABLE}_data WHERE id = 10")).scalar()
                if self._vocabulary is None or stamp != self._stamp:
                    rows = conn.execute(text(f"SELECT term, doc FROM {VOCAB_TABLE}")).all()
                    self._vocabulary, self._stamp = Vocabulary(dict(rows)), stamp
                self._read_at = now
            return self._vocabulary

    def known_words(self) -> Vocabulary:
        """The person's vocabulary as words (an entry of several, "Ty Hafan", gives each), grouped like the
        index's for finding the ones alike a query word; built again only when the list changed."""
        entries = tuple(self.known())
        if entries != self._known[0]:
            words = {w: 1 for entry in entries for w in words_of(entry)}
            self._known = (entries, Vocabulary(words))
        return self._known[1]

    def _alike(self, word: str, vocabulary: Vocabulary, known: Vocabulary) -> list[str]:
        """The index's words alike `word`; with the person's words it is or is alike, and theirs."""
        found = vocabulary.alike(word)
        mine = ([word] if word in known.counts else []) + known.alike(word)
        for right in mine:
            found = found + [right, *vocabulary.alike(right)]
        return [w for w in dict.fromkeys(found) if w != word]

    def match_expression(
        self, query: Terms, vocabulary: Vocabulary, known: Vocabulary | None = None
    ) -> tuple[str, dict[str, list[str]]]:
        """The FTS5 expression of a parsed query (every term quoted), and the alike words each word added."""
        groups = [_quoted(" ".join(words)) for words in query.phrases]
        if query.open_phrase:
            groups[-1] += "*"
        added: dict[str, list[str]] = {}
        for word in query.words:
            alike = self._alike(word, vocabulary, known or Vocabulary({}))
            if alike:
                added[word] = alike
            terms = [_quoted(word), *(_quoted(a) for a in alike)]
            if word == query.typing:
                terms.append(_quoted(word) + "*")
            groups.append("(" + " OR ".join(terms) + ")")
        return " AND ".join(groups), added

    def search(self, query_text: str, limit: int = 200) -> SearchResult:
        """The hits of `query_text` (see the module's rules), at most `limit`, grouped by footage and time."""
        query = parse(query_text)
        if query.empty or limit <= 0:
            return SearchResult(query_text, [])
        with self.store.engine.connect() as conn:
            expression, added = self.match_expression(query, self.vocabulary(conn), self.known_words())
            matched = conn.execute(text(f"SELECT count(*) FROM {TABLE} WHERE {TABLE} MATCH :q"), {"q": expression}).scalar_one()
            order = "rank" if matched <= RANK_MAX else f"{TABLE}.rowid DESC"
            rows = conn.execute(
                text(
                    f"SELECT {TABLE}.footage_id, f.title, {TABLE}.clip_id, {TABLE}.kind, {TABLE}.start_ts, {TABLE}.end_ts, f.start_ts, "
                    f"highlight({TABLE}, 0, :a, :b) FROM {TABLE} JOIN footage AS f ON f.id = {TABLE}.footage_id "
                    f"WHERE {TABLE} MATCH :q ORDER BY {order} LIMIT :n"
                ),
                {"q": expression, "a": _MARK_START, "b": _MARK_END, "n": limit},
            ).all()
            indexing = conn.execute(text("SELECT count(DISTINCT footage_id) FROM job WHERE state != 'done'")).scalar_one()
        hits = [_hit(*row) for row in rows]
        hits.sort(key=lambda h: (h.start - h.offset, h.footage_id, h.start, h.kind))
        return SearchResult(query_text, _one_per_clip(hits), matched > len(rows), added, indexing)


def _hit(footage_id, title, clip_id, kind, start, end, footage_start, marked: str) -> SearchHit:
    """A hit whose text had its matching words marked by FTS5's highlight(): the marks become spans."""
    plain, marks, at = [], [], 0
    for i, piece in enumerate(re.split(f"[{_MARK_START}{_MARK_END}]", marked)):
        if i % 2:
            marks.append((at, at + len(piece)))
        plain.append(piece)
        at += len(piece)
    return SearchHit(footage_id, title, clip_id, kind, start, end, start - footage_start, "".join(plain), marks)


def _one_per_clip(hits: list[SearchHit]) -> list[SearchHit]:
    """A clip's keyframes repeat its on-screen text and tags: keep the first keyframe's hit of each kind."""
    seen: set[tuple[int | None, str]] = set()
    out = []
    for hit in hits:
        if hit.kind in ("screen", "tags"):
            if (hit.clip_id, hit.kind) in seen:
                continue
            seen.add((hit.clip_id, hit.kind))
        out.append(hit)
    return out
