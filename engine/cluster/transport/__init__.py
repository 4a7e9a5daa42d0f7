"""How a coordinator reads a shard's arrays in place (one-sided reads)."""
