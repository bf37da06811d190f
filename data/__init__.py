"""The curated catalog, shipped inside clusterscout as ``clusterscout.data`` (no code)."""
