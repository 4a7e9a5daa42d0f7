"""The HTTP tests' real uvicorn servers (tests/endpoint/conftest.py), for the client's tests."""

from tests.endpoint.conftest import _quiet_rdflib, _stopping, serve  # noqa: F401 - fixtures, used by name
