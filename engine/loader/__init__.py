"""Bulk load on Spark: RDF files to a sharded, memory-mappable base store.

``spark_job.load`` is the entry point (``rivulet load`` on the command line);
``layout`` is the on-disk contract with ``engine.store.base_store``. Only the
modules that run Spark import pyspark; the store imports ``layout``,
``nt_terms`` and ``term_hash`` alone.
"""
