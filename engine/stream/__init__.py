"""Continuous queries over RDF streams on the hybrid store (Wukong+S)."""
