"""A Python client of Rivulet's streams and continuous queries (docs/client.md).

It imports nothing of the server: a program that only talks to a Rivulet
server over HTTP needs httpx and this package.
"""

from endpoint.client.client import Client, QueryHandle
from endpoint.client.errors import RivuletError
from endpoint.client.terms import IRI, BlankNode, Literal, TripleTerm
from endpoint.client.windows import Reconnect, Window
from endpoint.client.writer import StreamWriter

__all__ = ["IRI", "BlankNode", "Client", "Literal", "QueryHandle", "Reconnect", "RivuletError", "TripleTerm",
           "StreamWriter", "Window"]
