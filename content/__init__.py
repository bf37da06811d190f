"""The guides and FAQ, shipped inside clusterscout as ``clusterscout.content`` (no code)."""
