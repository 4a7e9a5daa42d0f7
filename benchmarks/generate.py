"""A seeded generator of an LSBench-like social-network graph.

Benchmarks need the same data, of an exact size, in two shapes: engine terms
for ``Store.add`` and N-Triples for pyoxigraph's bulk loader. The graph is
therefore kept as *blocks* of (subject index, object index) numpy arrays over
shared term pools, and both shapes are rendered from the blocks on demand.
Every block holds distinct pairs, so the graph has exactly ``n`` distinct
triples and both stores hold the same number after de-duplication.

Popularity is skewed (a Zipf-like weight ``(rank + 1) ** -alpha``) for
``knows`` targets and sources, post creators, and liked posts, so a few hub
users and viral posts exist, as in real social networks.

    python -m benchmarks.generate --triples 100000 --out /tmp/sn.nt
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.rdf import IRI, RDF_TYPE, XSD_DATETIME, XSD_INTEGER, Literal, format_term

SN = "http://rivulet.example.org/sn/"
DEFAULT_TRIPLES = 1_000_000
DEFAULT_SEED = 20240611

FIRST_NAMES = ("Ada Alan Barbara Claude Donald Edsger Frances Grace Ivan John Katherine Leslie "
               "Margaret Niklaus Radia Shafi Tim Tony Vint Whitfield").split()
LAST_NAMES = ("Allen Backus Cerf Diffie Dijkstra Hamilton Hoare Hopper Knuth Lamport Liskov "
              "Lovelace McCarthy Perlman Ritchie Shannon Sutherland Thompson Turing Wirth").split()
WORDS = ("stream graph query window event sensor city traffic music photo travel food code "
         "coffee rain sunny weekend concert match goal release bug fix launch meetup").split()
TAG_COUNT = 100
WORDS_PER_POST = 6
DATE_START = np.datetime64("2020-01-01T00:00:00", "s")
DATE_SPAN_SECONDS = 4 * 365 * 86400


@dataclass(frozen=True)
class Pool:
    """Terms of one kind with their N-Triples spelling, addressed by index."""

    terms: list
    spellings: list[str]


@dataclass(frozen=True)
class Block:
    """Triples ``(subjects[s[i]], predicate, objects[o[i]])`` with distinct (s, o) pairs."""

    subjects: Pool
    predicate: IRI
    objects: Pool
    s: np.ndarray
    o: np.ndarray


@dataclass(frozen=True)
class Constants:
    """Terms the benchmark queries start from; chosen from the data so they exist
    and are neither hubs nor empty (a "typical active user")."""

    user: str
    tag: str


@dataclass
class SocialGraph:
    """The generated graph: blocks of triples plus the query constants."""

    blocks: list[Block]
    constants: Constants
    users: int
    posts: int

    def __len__(self) -> int:
        return sum(len(b.s) for b in self.blocks)

    def triples(self) -> Iterator[tuple]:
        """Engine-term triples ``(s, p, o)``; terms are shared, not copied."""
        for b in self.blocks:
            subjects, objects, p = b.subjects.terms, b.objects.terms, b.predicate
            for i, j in zip(b.s.tolist(), b.o.tolist(), strict=True):
                yield subjects[i], p, objects[j]

    def triple_list(self) -> list[tuple]:
        """All triples as one list (built per block with a comprehension, for speed)."""
        out: list[tuple] = []
        for b in self.blocks:
            subjects, objects, p = b.subjects.terms, b.objects.terms, b.predicate
            out.extend([(subjects[i], p, objects[j]) for i, j in zip(b.s.tolist(), b.o.tolist(),
                                                                       strict=True)])
        return out

    def ntriples(self) -> bytes:
        """The whole graph as an N-Triples document."""
        parts: list[str] = []
        for b in self.blocks:
            subjects, objects, p = b.subjects.spellings, b.objects.spellings, format_term(b.predicate)
            parts.append("".join([f"{subjects[i]} {p} {objects[j]} .\n"
                                  for i, j in zip(b.s.tolist(), b.o.tolist(), strict=True)]))
        return "".join(parts).encode("utf-8")

    def write_ntriples(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_bytes(self.ntriples())
        return path


# --------------------------------------------------------------------- pools
def _iri_pool(prefix: str, count: int) -> Pool:
    values = [f"{prefix}{i}" for i in range(count)]
    return Pool([IRI(v) for v in values], [f"<{v}>" for v in values])


def _literal_pool(lexicals: list[str], datatype: str | None) -> Pool:
    suffix = f"^^<{datatype}>" if datatype else ""
    # benchmark lexicals never contain quotes, backslashes or newlines
    return Pool([Literal(v, datatype) for v in lexicals], [f'"{v}"{suffix}' for v in lexicals])


def _vocab(name: str) -> IRI:
    return IRI(SN + name)


# ------------------------------------------------------------------- sampling
def _zipf_weights(count: int, alpha: float) -> np.ndarray:
    w = (np.arange(count, dtype=np.float64) + 1.0) ** -alpha
    return w / w.sum()


def _unique_pairs(rng: np.random.Generator, k: int, left: np.ndarray, right: np.ndarray,
                  no_self: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``k`` distinct (a, b) pairs, a ~ ``left`` weights, b ~ ``right`` weights.

    Over-samples and de-duplicates in rounds, keeping first occurrences, so the
    result is deterministic for a seed and the skew survives de-duplication."""
    n_right = len(right)
    if k > len(left) * n_right - (len(left) if no_self else 0):
        raise ValueError(f"cannot draw {k} distinct pairs from {len(left)} x {n_right}")
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < k:
        m = int((k - len(keys)) * 1.3) + 64
        a = rng.choice(len(left), size=m, p=left)
        b = rng.choice(n_right, size=m, p=right)
        if no_self:
            keep = a != b
            a, b = a[keep], b[keep]
        keys = np.concatenate([keys, a.astype(np.int64) * n_right + b])
        _, first = np.unique(keys, return_index=True)
        keys = keys[np.sort(first)]
    keys = keys[:k]
    return keys // n_right, keys % n_right


# ------------------------------------------------------------------ generator
def generate(n: int = DEFAULT_TRIPLES, seed: int = DEFAULT_SEED) -> SocialGraph:
    """A social network of exactly ``n`` distinct triples, identical for a given seed.

    Shares of the budget (for 1M): 20k users x 3 (type, name, age), 200k knows,
    100k posts x 4 (type, creator, content, date), ~140k tags, rest likes."""
    if n < 2_000:
        raise ValueError("need at least 2,000 triples for a meaningful graph")
    rng = np.random.default_rng(seed)
    n_users, n_posts = n // 50, n // 10
    n_knows = n // 5

    users = _iri_pool(SN + "user/", n_users)
    posts = _iri_pool(SN + "post/", n_posts)
    tags = _iri_pool(SN + "tag/", TAG_COUNT)
    classes = Pool([_vocab("User"), _vocab("Post")], [f"<{SN}User>", f"<{SN}Post>"])

    # users: type, name, age
    first = rng.integers(0, len(FIRST_NAMES), n_users)
    last = rng.integers(0, len(LAST_NAMES), n_users)
    names = _literal_pool([f"{FIRST_NAMES[a]} {LAST_NAMES[b]} {i}" for i, (a, b)
                           in enumerate(zip(first.tolist(), last.tolist(), strict=True))], None)
    ages = _literal_pool([str(a) for a in range(13, 91)], XSD_INTEGER)
    user_ids = np.arange(n_users)
    blocks = [
        Block(users, IRI(RDF_TYPE), classes, user_ids, np.zeros(n_users, dtype=np.int64)),
        Block(users, _vocab("name"), names, user_ids, user_ids),
        Block(users, _vocab("age"), ages, user_ids, rng.integers(0, len(ages.terms), n_users)),
    ]

    # knows: skewed on both ends (active users follow many, celebrities are followed a lot)
    ks, ko = _unique_pairs(rng, n_knows, _zipf_weights(n_users, 0.5), _zipf_weights(n_users, 0.8),
                           no_self=True)
    blocks.append(Block(users, _vocab("knows"), users, ks, ko))

    # posts: type, creator (skewed), content, created, tags
    creators = rng.choice(n_users, size=n_posts, p=_zipf_weights(n_users, 0.6))
    words = rng.integers(0, len(WORDS), (n_posts, WORDS_PER_POST)).tolist()
    contents = _literal_pool([f"post {i}: " + " ".join([WORDS[w] for w in row])
                              for i, row in enumerate(words)], None)
    stamps = DATE_START + rng.integers(0, DATE_SPAN_SECONDS, n_posts).astype("timedelta64[s]")
    dates = _literal_pool([s + "Z" for s in np.datetime_as_string(stamps, unit="s").tolist()],
                          XSD_DATETIME)
    post_ids = np.arange(n_posts)
    blocks += [
        Block(posts, IRI(RDF_TYPE), classes, post_ids, np.ones(n_posts, dtype=np.int64)),
        Block(posts, _vocab("hasCreator"), users, post_ids, creators),
        Block(posts, _vocab("content"), contents, post_ids, post_ids),
        Block(posts, _vocab("created"), dates, post_ids, post_ids),
    ]
    per_post = rng.choice(4, size=n_posts, p=[0.2, 0.35, 0.3, 0.15])
    tag_post = np.repeat(post_ids, per_post)
    tag_keys = np.unique(tag_post * TAG_COUNT + rng.choice(TAG_COUNT, size=len(tag_post),
                                                           p=_zipf_weights(TAG_COUNT, 1.0)))
    blocks.append(Block(posts, _vocab("hasTag"), tags, tag_keys // TAG_COUNT, tag_keys % TAG_COUNT))

    # likes fill the rest of the budget exactly
    n_likes = n - sum(len(b.s) for b in blocks)
    ls, lo = _unique_pairs(rng, n_likes, _zipf_weights(n_users, 0.5), _zipf_weights(n_posts, 0.9))
    blocks.append(Block(users, _vocab("likes"), posts, ls, lo))

    constants = _pick_constants(n_users, ks, creators, lo, tag_keys % TAG_COUNT)
    return SocialGraph(blocks, constants, n_users, n_posts)


def _pick_constants(n_users: int, knows_s: np.ndarray, creators: np.ndarray, liked_posts: np.ndarray,
                    post_tags: np.ndarray) -> Constants:
    """A typical active user (5-30 friends, 3-30 posts, at least one post liked) and
    a mid-popularity tag (the 10th most used). Picking from the
    data keeps the queries meaningful at any ``--triples``; picking the median
    candidate keeps the choice stable for a seed."""
    out_degree = np.bincount(knows_s, minlength=n_users)
    post_count = np.bincount(creators, minlength=n_users)
    liked_creators = np.zeros(n_users, dtype=bool)
    liked_creators[creators[np.unique(liked_posts)]] = True
    fits = (out_degree >= 5) & (out_degree <= 30) & (post_count >= 3) & (post_count <= 30) & liked_creators
    candidates = np.flatnonzero(fits)
    if len(candidates) == 0:
        candidates = np.argsort(-(out_degree * (post_count > 0)))
    user = int(candidates[len(candidates) // 2])
    tag = int(np.argsort(-np.bincount(post_tags, minlength=TAG_COUNT), kind="stable")[9])
    return Constants(f"{SN}user/{user}", f"{SN}tag/{tag}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=DEFAULT_TRIPLES)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, help="write N-Triples here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    graph = generate(args.triples, args.seed)
    print(f"generated {len(graph):,} triples ({graph.users:,} users, {graph.posts:,} posts) "
          f"in {time.perf_counter() - start:.2f}s; constants: {graph.constants}")
    if args.out:
        start = time.perf_counter()
        graph.write_ntriples(args.out)
        print(f"wrote {args.out} in {time.perf_counter() - start:.2f}s")


if __name__ == "__main__":
    main()
