"""Errors of the stream API; each maps to one HTTP status in the endpoint."""


class StreamError(Exception):
    """Base class; ``status`` is the HTTP status the endpoint answers with."""

    status = 400


class UnknownStream(StreamError):
    status = 404


class UnknownQuery(StreamError):
    status = 404


class DuplicateName(StreamError):
    status = 409


class StreamInUse(StreamError):
    """A change a registered query reading (or writing) the stream would not
    survive: dropping the stream, or changing what it absorbs where."""

    status = 409


class LateItem(StreamError):
    """An item older than the stream's watermark (SEMANTICS.md: rejected, never reordered)."""

    status = 409

    def __init__(self, stream: str, timestamp: int, watermark: int) -> None:
        super().__init__(
            f"late item on stream {stream!r}: timestamp {timestamp} ms is older than the "
            f"stream's watermark {watermark} ms"
        )
        self.timestamp = timestamp
        self.watermark = watermark


class BadRegistration(StreamError):
    status = 400


class TooManyWindows(StreamError):
    """A timestamp so far ahead that it would close more windows at once than
    the server evaluates in one request (every window must be reported)."""

    status = 422


class BadItem(StreamError):
    """A stream item body that cannot be read; nothing of it is ingested."""

    status = 400


class UnsupportedItemType(StreamError):
    """An item body in a media type streams do not take."""

    status = 415
