"""Web site and JSON API."""
