"""Reading, validating and querying the curated catalog in data/."""
