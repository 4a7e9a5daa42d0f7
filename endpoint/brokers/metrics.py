"""The broker connections' numbers for ``/metrics``, read when Prometheus scrapes."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from endpoint.brokers.connectors import Connectors


class ConnectorCollector(Collector):
    """Per stream source and per query sink: connection, traffic, errors, lag."""

    def __init__(self, connectors: Connectors) -> None:
        self.connectors = connectors

    def collect(self) -> Iterator[Metric]:
        label = ["stream"]
        connected = GaugeMetricFamily("rivulet_stream_source_connected",
                                      "1 while a stream's source is connected to its broker", labels=label)
        counters = {key: CounterMetricFamily(f"rivulet_stream_source_{key}", text, labels=label)
                    for key, text in (
            ("messages", "Messages a stream's source received from its broker (redeliveries included)"),
            ("items", "Items a stream's source ingested"),
            ("bad_messages", "Messages a stream's source could not ingest (unreadable, late), "
                             "acknowledged and left out"),
            ("duplicates", "Messages a stream's source recognised as delivered before, acknowledged "
                           "and not ingested again"),
            ("acknowledged", "Messages a stream's source acknowledged to its broker, once durable"),
        )}
        lag = GaugeMetricFamily("rivulet_stream_source_lag_seconds", "Age of the oldest message a stream's "
                                "source received and has not yet acknowledged", labels=label)
        for name, (_, source) in list(self.connectors.sources.items()):
            counts = source.counts
            connected.add_metric([name], 1 if source.inlet.state.connected else 0)
            for key, value in (("messages", counts.messages), ("items", counts.items),
                               ("bad_messages", counts.bad), ("duplicates", counts.duplicates),
                               ("acknowledged", counts.acknowledged)):
                counters[key].add_metric([name], value)
            lag.add_metric([name], source.lag_seconds())
        yield connected
        yield from counters.values()
        yield lag
        sink_connected = GaugeMetricFamily("rivulet_query_sink_connected", "1 while a query's sink is "
                                           "connected to its broker", labels=["query"])
        published = CounterMetricFamily("rivulet_query_sink_published", "Windows a query's sink published "
                                        "and its broker acknowledged", labels=["query"])
        skipped = CounterMetricFamily("rivulet_query_sink_skipped", "Windows a query's sink could not "
                                      "publish: no longer retained when its broker came back",
                                      labels=["query"])
        for name, (_, sink) in list(self.connectors.sinks.items()):
            sink_connected.add_metric([name], 1 if sink.outlet.state.connected else 0)
            published.add_metric([name], sink.published)
            skipped.add_metric([name], sink.skipped)
        yield from (sink_connected, published, skipped)
