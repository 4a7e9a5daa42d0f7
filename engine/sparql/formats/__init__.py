"""Serialisers and parsers for the SPARQL 1.1 query result formats.

One module per format; :mod:`engine.sparql.results_formats` is the entry
point that picks the module for a format name or media type.
"""
