"""``rivulet replay FILE --stream NAME``: feed a recorded stream to a server.

The file is timestamped N-Triples (see engine/stream/batch_format.py). Lines
are grouped into batches of ``--batch-ms`` of application time and posted at
the recorded pace (``--rate 1``), faster (``--rate 10``) or as fast as the
server takes them (``--rate 0``). The lines go out as written: only the
timestamp at the head of each line is read here, the server parses the rest.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from tqdm import tqdm

from endpoint.command_errors import CommandError
from engine.stream import BATCH_MEDIA_TYPE, parse_timestamp


def batches(path: Path, batch_ms: int) -> Iterator[tuple[int, list[str], int]]:
    """``(first timestamp, lines, triples)`` per batch of ``batch_ms`` of application time."""
    lines: list[str] = []
    first = None
    triples = 0
    with path.open(encoding="utf-8") as source:
        for number, line in enumerate(source, 1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            head = stripped.split(None, 1)[0]
            try:
                ts = parse_timestamp(head)
            except ValueError as exc:
                raise SystemExit(f"{path}:{number}: {exc}") from exc
            if first is not None and ts >= first + batch_ms:
                yield first, lines, triples
                lines, first, triples = [], None, 0
            if first is None:
                first = ts
            lines.append(stripped)
            triples += stripped != head
    if lines:
        yield first, lines, triples


def replay(args: argparse.Namespace) -> int:
    try:
        return _replay(args)
    except httpx.TransportError as exc:  # nothing listens there, or the connection broke
        raise CommandError(f"cannot reach the server at {exc.request.url}: {exc}") from None


def _replay(args: argparse.Namespace) -> int:
    path = Path(args.file)
    url = f"{args.server.rstrip('/')}/streams/{args.stream}"
    headers = {"Content-Type": BATCH_MEDIA_TYPE}
    if args.token:
        headers["Authorization"] = f"Bearer {args.token}"
    start_wall = time.monotonic()
    start_ts = None
    sent_triples = 0
    with httpx.Client(timeout=60.0) as client, tqdm(unit=" triples", desc=f"replay → {args.stream}",
                                                     disable=args.quiet, delay=1.0) as bar:
        for first, lines, triples in batches(path, args.batch_ms):
            if start_ts is None:
                start_ts = first
            if args.rate > 0:
                due = start_wall + (first - start_ts) / 1000 / args.rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            response = client.post(url, content="\n".join(lines).encode(), headers=headers)
            if response.status_code >= 300:
                bar.close()
                print(f"the server refused a batch at {first} ms: {response.status_code} {response.text}",
                      file=sys.stderr)
                return 1
            sent_triples += triples
            bar.update(triples)
            bar.set_postfix(app_time_ms=first)
    elapsed = time.monotonic() - start_wall
    rate = sent_triples / max(elapsed, 1e-9)
    print(f"replayed {sent_triples} triples in {elapsed:.2f} s ({rate:.0f} triples/s)")
    return 0


def add_parser(subparsers) -> None:
    """Register ``rivulet replay`` on the CLI."""
    parser = subparsers.add_parser("replay", help="feed a timestamped N-Triples file to a stream")
    parser.add_argument("file", help="timestamped N-Triples file")
    parser.add_argument("--stream", required=True, help="name of the declared stream (PUT /streams/NAME)")
    parser.add_argument("--server", default="http://127.0.0.1:8000", help="server base URL")
    parser.add_argument("--rate", type=float, default=1.0,
                        help="pace: 1 = recorded pace, 10 = ten times faster, 0 = as fast as possible")
    parser.add_argument("--batch-ms", type=int, default=100, help="application time per POST (ms)")
    parser.add_argument("--token", help="bearer token when the server requires one for writes")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=replay)
