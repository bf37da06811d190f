"""Typer command groups contributed by feature packages; registered in clusterscout.cli."""
