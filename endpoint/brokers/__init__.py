"""Streams fed by message brokers and queries publishing to them (MQTT today).

:class:`Connectors` runs a :class:`~endpoint.brokers.stream_source.StreamSource`
for every stream whose definition has a ``source`` and a
:class:`~endpoint.brokers.query_sink.QuerySink` for every query given a sink;
the broker's client library sits behind :mod:`~endpoint.brokers.connector`.
"""

from endpoint.brokers.connectors import Connectors

__all__ = ["Connectors"]
