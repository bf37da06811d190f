"""Run the command line with ``python -m clusterscout``."""

from clusterscout.cli import app

app()
