"""Price feeds that refresh catalog prices from outside catalogs."""
