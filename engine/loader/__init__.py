"""Bulk load on Spark: RDF files to a sharded, memory-mappable base store.

``spark_job.load`` is the entry point (``rivulet load`` on the command line).
The loader writes the format the store owns: where each array lives
(``engine.store.layout``), how terms are numbered (``engine.store.term_hash``)
and how each term is spelled (``engine.rdf``'s canonical N-Triples). It
imports the store; the store never imports the loader. Only the modules that
run Spark import pyspark.
"""
