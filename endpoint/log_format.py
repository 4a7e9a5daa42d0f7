"""The server's log format: plain text (the default) or JSON lines.

``rivulet serve --log-format json`` writes one JSON object per line on
standard error, for log collectors that index fields rather than parse
text: ``time`` (ISO 8601, UTC), ``level``, ``logger``, ``message``, and
``exception`` (the traceback) when there is one. uvicorn's own loggers go
through the same handler, its access log (``--access-log``) too, whose
lines also carry ``client``, ``method``, ``path`` and ``status`` as fields;
Python warnings and uncaught exceptions in threads become log records as
well, so that every line of standard error parses.
"""

from __future__ import annotations

import logging
import logging.config
import sys
import threading
from datetime import UTC, datetime

import orjson

#: the text format ``rivulet serve`` has always used
TEXT_FORMAT = "%(levelname)s:     %(name)s: %(message)s"
#: the choices of ``--log-format``
LOG_FORMATS = ("text", "json")
#: the arguments uvicorn gives its access-log records
ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")


class JsonLines(logging.Formatter):
    """A log record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
                    .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            entry.update(zip(ACCESS_FIELDS, record.args, strict=True))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        # default=str: a message argument orjson cannot write is written as its text
        return orjson.dumps(entry, default=str).decode()


def json_logging_config() -> dict:
    """The ``logging.config`` dictionary of the JSON format: one handler on
    standard error, at the root, which uvicorn's loggers propagate to."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonLines}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json",
                                "stream": "ext://sys.stderr"}},
        "root": {"handlers": ["stderr"], "level": "INFO"},
        "loggers": {
            # uvicorn's default configuration gives these their own handlers; here they use the root's
            "uvicorn": {"handlers": [], "propagate": True},
            "uvicorn.error": {"handlers": [], "propagate": True},
            "uvicorn.access": {"handlers": [], "propagate": True},
            # its INFO lines at every start say nothing
            "alembic": {"level": "WARNING"},
        },
    }


def configure_logging(log_format: str) -> dict[str, object]:
    """Set up this process's logging in ``log_format``; returns the options
    to give ``uvicorn.run`` (which applies them in each of its worker
    processes too). Text keeps uvicorn's own configuration."""
    if log_format == "json":
        config = json_logging_config()
        logging.config.dictConfig(config)
        logging.captureWarnings(True)
        threading.excepthook = _log_thread_exception
        sys.excepthook = _log_exception
        return {"log_config": config}
    logging.basicConfig(level=logging.INFO, format=TEXT_FORMAT)
    logging.getLogger("alembic").setLevel(logging.WARNING)  # its INFO lines at every start say nothing
    return {}


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    logging.getLogger("rivulet").critical("uncaught exception in thread %s", name,
                                          exc_info=(args.exc_type, args.exc_value, args.exc_traceback))


def _log_exception(exc_type, exc_value, traceback) -> None:
    logging.getLogger("rivulet").critical("uncaught exception", exc_info=(exc_type, exc_value, traceback))
