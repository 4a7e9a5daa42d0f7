"""The ``rivulet`` commands' expected failures, told in one line.

A missing or unreadable file, malformed RDF or SPARQL, a server that cannot
be reached: these are the user's to fix, and a Python traceback hides the one
line that says what to fix. :func:`run_command` runs a command and turns
these errors into ``rivulet COMMAND: message`` on standard error and exit
status 1; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import sys

from engine.rdf import RdfSyntaxError
from engine.sparql.exec.service import ServiceError
from engine.sparql.syntax import SparqlSyntaxError

#: exit status of a command that failed for one of these reasons
FAILED = 1


class CommandError(Exception):
    """A failure a command has already put in words (the message is the whole line)."""


def explain(error: BaseException) -> str | None:
    """The one line for an expected error, or None for any other."""
    if isinstance(error, CommandError):
        return str(error)
    if isinstance(error, SparqlSyntaxError):
        return f"malformed query: {error}"
    if isinstance(error, (RdfSyntaxError, ServiceError)):
        return str(error)
    if isinstance(error, OSError) and error.filename is not None:
        reason = {FileNotFoundError: "no such file", IsADirectoryError: "is a directory",
                  PermissionError: "permission denied"}.get(type(error), error.strerror or str(error))
        return f"{error.filename}: {reason}"
    return None


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command (``args.run``); its expected failures end in one line."""
    try:
        return args.run(args)
    except (CommandError, SparqlSyntaxError, RdfSyntaxError, ServiceError, OSError) as error:
        line = explain(error)
        if line is None:
            raise
        print(f"rivulet {args.command}: {line}", file=sys.stderr)
        return FAILED
