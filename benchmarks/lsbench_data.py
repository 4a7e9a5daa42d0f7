"""A seeded LSBench-like social network and its five RDF streams.

LSBench (Le-Phuoc et al., ISWC 2012) pairs a stored social graph with five
streams of new activity; Wukong+S (SOSP'17) evaluated L1-L6 on it. The
original generator is a Java program whose output we do not have, so this
module builds data of the same shape in the namespaces of
``../shared/datasets/lsbench/queries.md``, sized by a triple budget and
identical for a given seed.

The stored data goes to two named graphs, because SEMANTICS.md makes a
C-SPARQL query read stored data only through ``FROM <g>``:

* ``SOCIAL_GRAPH``: what the queries join with the windows: users and their
  ``sioc:account_of`` persons (with profiles), ``foaf:knows``, group
  membership and forum (channel) subscriptions.
* ``HISTORY_GRAPH``: old posts, photos, albums and likes. It fills the budget
  like LSBench's history does, but no query names it: a window must see only
  the new posts of its own time span, not every post a user ever wrote.

Activity is skewed (Zipf-like weight ``(rank + 1) ** -alpha``; user index 0 is
the most active) so that windows over a few hundred items still join. The
query constants of queries.md (``sibu:u6496``, ``sibp:p864``, ``sibp:p3514``)
are pinned to active users, so the queries have answers at any size; the
other user and person numbers are drawn at random from a wider range.

    python -m benchmarks.lsbench_data --triples 1000000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from benchmarks.generate import Block, Pool, _unique_pairs, _zipf_weights
from engine.rdf import IRI, XSD, Literal, Term, format_term

SIB = "http://www.ins.cwi.nl/sib/"
VOCAB = SIB + "vocabulary/"
USER = SIB + "user/"
PERSON = SIB + "person/"
GROUP = SIB + "group/"
FORUM = SIB + "forum/"
POST = SIB + "post/"
PHOTO = SIB + "photo/"
ALBUM = SIB + "album/"
STREAM = SIB + "stream/"
SIOC = "http://rdfs.org/sioc/ns#"
FOAF = "http://xmlns.com/foaf/0.1/"
DBP = "http://dbpedia.org/resource/"

SOCIAL_GRAPH = SIB + "graph/social"
HISTORY_GRAPH = SIB + "graph/history"

DEFAULT_SEED = 20170928
#: the application time (ms) the streams start at; a multiple of every STEP used
START_MS = 1_700_000_000_000

#: (user rank, user number) pinned for L1; (user rank, person number) for L2, L3
L1_USER = (1, 6496)
L2_PERSON = (2, 864)
L3_PERSON = (8, 3514)
#: L3's user knows this many of the most active users, so its friends post
L3_ACTIVE_FRIENDS = 8

COUNTRIES = ("Peoples_Republic_of_China United_States India Germany France Brazil Japan "
             "United_Kingdom Italy Spain Canada Mexico Nigeria Indonesia Vietnam Kenya").split()
TAG_COUNT = 60
TAGS_PER_POST_P = (0.2, 0.35, 0.3, 0.15)  # P(0..3 hashtags)
USERTAGS_PER_PHOTO_P = (0.0, 0.5, 0.35, 0.15)  # P(0..3 tagged users)
#: a like is for a post/photo of the last LIKE_HORIZON_MS, or (LIKE_OLD_SHARE) an old one
LIKE_HORIZON_MS = 1_000
LIKE_OLD_SHARE = 0.1


def sib(name: str) -> IRI:
    return IRI(VOCAB + name)


CREATOR_OF = IRI(SIOC + "creator_of")
CONTAINER_OF = IRI(SIOC + "container_of")
ACCOUNT_OF = IRI(SIOC + "account_of")
SUBSCRIBER_OF = IRI(SIOC + "subscriber_of")
HAS_MEMBER = IRI(SIOC + "has_member")
EMAIL = IRI(SIOC + "email")
KNOWS = IRI(FOAF + "knows")
GENDER = IRI(FOAF + "gender")
BIRTHDAY = IRI(FOAF + "birthday")
BASED_NEAR = IRI(FOAF + "based_near")
HASHTAG = sib("hashtag")
LIKE = sib("like")
USERTAG = sib("usertag")
GPS_LAT = sib("gps_latitude")
GPS_LONG = sib("gps_longitude")


@dataclass(frozen=True)
class StreamSpec:
    """One of LSBench's streams: its name, IRI, the predicates that are timing
    data, and the rate (triples/s) of the Wukong+S evaluation."""

    name: str
    timing: frozenset[str]
    paper_triples_per_s: int
    triples_per_item: float

    @property
    def iri(self) -> IRI:
        return IRI(STREAM + self.name)


STREAMS: dict[str, StreamSpec] = {
    s.name: s
    for s in (
        StreamSpec("poststream", frozenset(), 10_000,
                   2 + sum(i * p for i, p in enumerate(TAGS_PER_POST_P))),
        StreamSpec("postlikestream", frozenset(), 86_000, 1.0),
        StreamSpec("photostream", frozenset(), 10_000,
                   1 + sum(i * p for i, p in enumerate(USERTAGS_PER_PHOTO_P))),
        StreamSpec("photolikestream", frozenset(), 7_500, 1.0),
        StreamSpec("gpsstream", frozenset({GPS_LAT.value, GPS_LONG.value}), 20_000, 2.0),
    )
}

#: an item: (timestamp ms, triples)
Item = tuple[int, list[tuple[Term, Term, Term]]]


@dataclass
class LSBenchData:
    """The stored graphs as blocks (see :mod:`benchmarks.generate`) and the
    pools the stream generator draws from."""

    social: list[Block]
    history: list[Block]
    users: Pool
    forums: Pool
    albums: Pool
    tags: Pool
    history_posts: int
    history_photos: int

    def __len__(self) -> int:
        return sum(len(b.s) for b in self.social + self.history)

    @staticmethod
    def triples(blocks: Sequence[Block]) -> list[tuple[Term, Term, Term]]:
        out: list[tuple[Term, Term, Term]] = []
        for b in blocks:
            subjects, objects, p = b.subjects.terms, b.objects.terms, b.predicate
            out.extend([(subjects[i], p, objects[j]) for i, j in zip(b.s.tolist(), b.o.tolist())])
        return out

    def social_triples(self) -> list[tuple[Term, Term, Term]]:
        return self.triples(self.social)

    def history_triples(self) -> list[tuple[Term, Term, Term]]:
        return self.triples(self.history)


# --------------------------------------------------------------------- pools
def _pool(terms: list) -> Pool:
    return Pool(terms, [format_term(t) for t in terms])


def _iri_pool(prefix: str, numbers: np.ndarray | range) -> Pool:
    return _pool([IRI(f"{prefix}{n}") for n in numbers])


def _numbering(rng: np.random.Generator, count: int, pinned: Mapping[int, int]) -> np.ndarray:
    """Distinct public numbers for ``count`` entities, ``pinned`` rank -> number
    fixed, the others drawn from a range twice the count (and wide enough for
    the pinned ones), so IRIs look like LSBench's and never reveal the rank."""
    space = max(2 * count, max(pinned.values()) + 1)
    free = np.setdiff1d(np.arange(space), np.fromiter(pinned.values(), dtype=np.int64))
    numbers = rng.choice(free, size=count, replace=False)
    for rank, number in pinned.items():
        numbers[rank] = number
    return numbers


def _pairs(s: np.ndarray, o: np.ndarray, n_objects: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (s, o) pairs, first occurrences kept in order."""
    keys = s.astype(np.int64) * n_objects + o
    _, first = np.unique(keys, return_index=True)
    keys = keys[np.sort(first)]
    return keys // n_objects, keys % n_objects


def _multi(rng: np.random.Generator, owners: np.ndarray, per_owner_p: Sequence[float], n_targets: int,
           weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """0-3 distinct targets per owner (hashtags of a post, users tagged in a photo)."""
    counts = rng.choice(len(per_owner_p), size=len(owners), p=per_owner_p)
    s = np.repeat(owners, counts)
    return _pairs(s, rng.choice(n_targets, size=len(s), p=weights), n_targets)


# ------------------------------------------------------------------ generator
def generate(triples: int, seed: int = DEFAULT_SEED) -> LSBenchData:
    """Stored data of exactly ``triples`` distinct triples (the history's likes
    fill the budget): about a third social graph, two thirds history."""
    if triples < 2_000:
        raise ValueError("need at least 2,000 triples for a meaningful graph")
    rng = np.random.default_rng(seed)
    n_users = max(triples // 60, L3_PERSON[0] + 1)
    n_groups, n_forums = max(n_users // 20, 3), max(n_users // 10, 4)
    n_albums = max(n_users // 4, 2)
    n_posts, n_photos = triples // 12, triples // 40

    user_numbers = _numbering(rng, n_users, dict([L1_USER]))
    person_numbers = _numbering(rng, n_users, dict([L2_PERSON, L3_PERSON]))
    users = _iri_pool(USER + "u", user_numbers)
    persons = _iri_pool(PERSON + "p", person_numbers)
    groups = _iri_pool(GROUP + "g", range(n_groups))
    forums = _iri_pool(FORUM + "f", range(n_forums))
    albums = _iri_pool(ALBUM + "al", range(n_albums))
    posts = _iri_pool(POST + "po", range(n_posts))
    photos = _iri_pool(PHOTO + "ph", range(n_photos))
    tags = _iri_pool(DBP + "Topic_", range(TAG_COUNT))
    countries = _pool([IRI(DBP + c) for c in COUNTRIES])
    genders = _pool([Literal("female"), Literal("male")])
    days = np.datetime64("1950-01-01") + np.arange(0, 55 * 365, 7).astype("timedelta64[D]")
    birthdays = _pool([Literal(d, XSD + "date") for d in np.datetime_as_string(days).tolist()])
    emails = _pool([Literal(f"p{n}@sib.example.org") for n in person_numbers.tolist()])

    ids = np.arange(n_users)
    active = _zipf_weights(n_users, 0.8)
    knows_s, knows_o = _unique_pairs(rng, 10 * n_users, _zipf_weights(n_users, 0.5),
                                     _zipf_weights(n_users, 0.6), no_self=True)
    l3_user = L3_PERSON[0]
    friends = np.array([u for u in range(L3_ACTIVE_FRIENDS + 1) if u != l3_user])
    knows_s, knows_o = _pairs(np.concatenate([knows_s, np.full(len(friends), l3_user)]),
                              np.concatenate([knows_o, friends]), n_users)
    member_g, member_u = _pairs(rng.choice(n_groups, 2 * n_users, p=_zipf_weights(n_groups, 0.7)),
                                rng.integers(0, n_users, 2 * n_users), n_users)
    sub_u, sub_f = _pairs(rng.choice(n_users, 3 * n_users, p=_zipf_weights(n_users, 0.3)),
                          rng.choice(n_forums, 3 * n_users, p=_zipf_weights(n_forums, 0.5)), n_forums)
    social = [
        Block(users, ACCOUNT_OF, persons, ids, ids),
        Block(persons, GENDER, genders, ids, rng.integers(0, 2, n_users)),
        Block(persons, BIRTHDAY, birthdays, ids, rng.integers(0, len(birthdays.terms), n_users)),
        Block(persons, EMAIL, emails, ids, ids),
        Block(users, BASED_NEAR, countries, ids,
              rng.choice(len(COUNTRIES), n_users, p=_zipf_weights(len(COUNTRIES), 1.0))),
        Block(users, KNOWS, users, knows_s, knows_o),
        Block(groups, HAS_MEMBER, users, member_g, member_u),
        Block(users, SUBSCRIBER_OF, forums, sub_u, sub_f),
    ]

    post_ids, photo_ids = np.arange(n_posts), np.arange(n_photos)
    tag_p, tag_t = _multi(rng, post_ids, TAGS_PER_POST_P, TAG_COUNT, _zipf_weights(TAG_COUNT, 1.0))
    usertag_p, usertag_u = _multi(rng, photo_ids, USERTAGS_PER_PHOTO_P, n_users, active)
    history = [
        Block(users, CREATOR_OF, posts, rng.choice(n_users, n_posts, p=active), post_ids),
        Block(forums, CONTAINER_OF, posts, rng.choice(n_forums, n_posts, p=_zipf_weights(n_forums, 0.8)),
              post_ids),
        Block(posts, HASHTAG, tags, tag_p, tag_t),
        Block(users, CREATOR_OF, albums, rng.choice(n_users, n_albums, p=active), np.arange(n_albums)),
        Block(albums, CONTAINER_OF, photos, rng.integers(0, n_albums, n_photos), photo_ids),
        Block(photos, USERTAG, users, usertag_p, usertag_u),
    ]
    n_likes = triples - sum(len(b.s) for b in social + history)
    if n_likes <= 0:
        raise ValueError(f"{triples} triples leave no room for likes")
    like_u, like_p = _unique_pairs(rng, n_likes, _zipf_weights(n_users, 0.5), _zipf_weights(n_posts, 0.9))
    history.append(Block(users, LIKE, posts, like_u, like_p))
    return LSBenchData(social, history, users, forums, albums, tags, n_posts, n_photos)


# ------------------------------------------------------------------- streams
@dataclass
class _Recent:
    """Ids and timestamps of the posts (or photos) streamed lately: what likes point at."""

    ts: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    ids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    def add(self, ts: np.ndarray, ids: np.ndarray, keep_after: int) -> None:
        keep = self.ts >= keep_after
        self.ts = np.concatenate([self.ts[keep], ts])
        self.ids = np.concatenate([self.ids[keep], ids])

    def pick(self, rng: np.random.Generator, at: np.ndarray, old: int) -> np.ndarray:
        """For each time in ``at``, an id streamed in the horizon before it, or
        (LIKE_OLD_SHARE of the time, or when there is none) ``-1 - k`` for old item k."""
        lo = np.searchsorted(self.ts, at - LIKE_HORIZON_MS, side="left")
        hi = np.searchsorted(self.ts, at, side="right")
        span = hi - lo
        chosen = lo + (rng.random(len(at)) * np.maximum(span, 1)).astype(np.int64)
        recent = (span > 0) & (rng.random(len(at)) >= LIKE_OLD_SHARE)
        out = -1 - rng.choice(old, size=len(at), p=_zipf_weights(old, 0.9))
        out[recent] = self.ids[np.minimum(chosen[recent], len(self.ids) - 1)]
        return out


def scaled_rates(scale: float) -> dict[str, float]:
    """Items per second for each stream at ``scale`` times the paper's triple rates."""
    return {name: s.paper_triples_per_s * scale / s.triples_per_item for name, s in STREAMS.items()}


class StreamGenerator:
    """The five streams' items, generated chunk by chunk in time order.

    Likes point at posts and photos streamed within the last second (so L5 and
    L6 join inside a window) or, now and then, at old ones. New posts and
    photos are numbered after the history's, so stream items never repeat a
    stored triple."""

    def __init__(self, data: LSBenchData, rates: Mapping[str, float], seed: int = DEFAULT_SEED,
                 start_ms: int = START_MS) -> None:
        unknown = set(rates) - set(STREAMS)
        if unknown:
            raise ValueError(f"unknown streams {sorted(unknown)}")
        self.data = data
        self.rates = dict(rates)
        self.now = start_ms
        self._rng = np.random.default_rng(seed + 1)
        n_users = len(data.users.terms)
        self._creators = _zipf_weights(n_users, 0.8)
        self._likers = _zipf_weights(n_users, 0.5)
        self._tagged = _zipf_weights(n_users, 0.8)
        self._movers = _zipf_weights(n_users, 0.5)
        self._forums = _zipf_weights(len(data.forums.terms), 0.5)
        self._tags = _zipf_weights(TAG_COUNT, 1.0)
        self._next_post, self._next_photo = data.history_posts, data.history_photos
        self._posts, self._photos = _Recent(), _Recent()

    def advance(self, end_ms: int) -> dict[str, list[Item]]:
        """The items of every stream with a rate, timestamps in ``[now, end_ms)``."""
        start, self.now = self.now, end_ms
        out: dict[str, list[Item]] = {}
        for name in STREAMS:  # posts and photos before the likes that point at them
            rate = self.rates.get(name, 0.0)
            count = int(self._rng.poisson(rate * (end_ms - start) / 1000)) if rate else 0
            ts = np.sort(self._rng.integers(start, end_ms, count)) if count else np.empty(0, np.int64)
            out[name] = list(getattr(self, "_" + name)(ts))
        return out

    def _users(self, weights: np.ndarray, count: int) -> list[IRI]:
        terms = self.data.users.terms
        return [terms[i] for i in self._rng.choice(len(terms), count, p=weights).tolist()]

    def _poststream(self, ts: np.ndarray) -> Iterator[Item]:
        rng, n = self._rng, len(ts)
        ids = np.arange(self._next_post, self._next_post + n)
        self._next_post += n
        if n:
            self._posts.add(ts, ids, int(ts[0]) - LIKE_HORIZON_MS)
        creators = self._users(self._creators, n)
        forums = rng.choice(len(self._forums), n, p=self._forums).tolist()
        owner, tag = _multi(rng, np.arange(n), TAGS_PER_POST_P, TAG_COUNT, self._tags)
        tags_of: list[list[IRI]] = [[] for _ in range(n)]
        for i, t in zip(owner.tolist(), tag.tolist()):
            tags_of[i].append(self.data.tags.terms[t])
        for t, post_id, user, forum, tags in zip(ts.tolist(), ids.tolist(), creators, forums, tags_of):
            post = IRI(f"{POST}po{post_id}")
            yield t, [(user, CREATOR_OF, post), (self.data.forums.terms[forum], CONTAINER_OF, post),
                      *[(post, HASHTAG, tag) for tag in tags]]

    def _postlikestream(self, ts: np.ndarray) -> Iterator[Item]:
        targets = self._posts.pick(self._rng, ts, self.data.history_posts)
        for t, user, post in zip(ts.tolist(), self._users(self._likers, len(ts)), targets.tolist()):
            yield t, [(user, LIKE, IRI(f"{POST}po{post if post >= 0 else -1 - post}"))]

    def _photostream(self, ts: np.ndarray) -> Iterator[Item]:
        rng, n = self._rng, len(ts)
        ids = np.arange(self._next_photo, self._next_photo + n)
        self._next_photo += n
        if n:
            self._photos.add(ts, ids, int(ts[0]) - LIKE_HORIZON_MS)
        albums = rng.integers(0, len(self.data.albums.terms), n).tolist()
        owner, tagged = _multi(rng, np.arange(n), USERTAGS_PER_PHOTO_P, len(self._tagged), self._tagged)
        tagged_of: list[list[IRI]] = [[] for _ in range(n)]
        for i, u in zip(owner.tolist(), tagged.tolist()):
            tagged_of[i].append(self.data.users.terms[u])
        for t, photo_id, album, tagged_users in zip(ts.tolist(), ids.tolist(), albums, tagged_of):
            photo = IRI(f"{PHOTO}ph{photo_id}")
            yield t, [(self.data.albums.terms[album], CONTAINER_OF, photo),
                      *[(photo, USERTAG, u) for u in tagged_users]]

    def _photolikestream(self, ts: np.ndarray) -> Iterator[Item]:
        targets = self._photos.pick(self._rng, ts, self.data.history_photos)
        for t, user, photo in zip(ts.tolist(), self._users(self._likers, len(ts)), targets.tolist()):
            yield t, [(user, LIKE, IRI(f"{PHOTO}ph{photo if photo >= 0 else -1 - photo}"))]

    def _gpsstream(self, ts: np.ndarray) -> Iterator[Item]:
        n = len(ts)
        lat = self._rng.integers(-90_000, 90_000, n)
        lon = self._rng.integers(-180_000, 180_000, n)
        for t, user, la, lo in zip(ts.tolist(), self._users(self._movers, n), lat.tolist(), lon.tolist()):
            yield t, [(user, GPS_LAT, _degrees(la)), (user, GPS_LONG, _degrees(lo))]


def _degrees(thousandths: int) -> Literal:
    """An ``xsd:decimal`` in canonical form (no trailing zeros), so that every
    engine spells the value the same way in its results."""
    whole, frac = divmod(abs(thousandths), 1000)
    text = f"{'-' if thousandths < 0 else ''}{whole}.{f'{frac:03d}'.rstrip('0') or '0'}"
    return Literal(text, XSD + "decimal")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--scale", type=float, default=0.1, help="stream rates / the paper's")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    data = generate(args.triples, args.seed)
    print(f"stored: {len(data):,} triples ({sum(len(b.s) for b in data.social):,} social, "
          f"{sum(len(b.s) for b in data.history):,} history) in {time.perf_counter() - started:.2f}s")
    started = time.perf_counter()
    items = StreamGenerator(data, scaled_rates(args.scale), args.seed).advance(START_MS + 1_000)
    print(f"one second of streams in {time.perf_counter() - started:.2f}s: " + ", ".join(
        f"{name} {len(v)} items / {sum(len(t) for _, t in v)} triples" for name, v in items.items()))


if __name__ == "__main__":
    main()
