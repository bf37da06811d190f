"""Warnings summarised by kind: counts, order, and kinds the list does not know."""

from __future__ import annotations

from clusterscout.catalog.problems import WARNING_KINDS, Problem, Severity, warning_summary

W = Severity.WARNING


def test_warnings_are_counted_by_kind_most_frequent_first() -> None:
    problems = [
        Problem("a.toml", "sources[x].checked_on", "old", W, "stale-source"),
        Problem("a.toml", "offers[y].prices[0].as_of", "old", W, "stale-price"),
        Problem("b.toml", "offers", "no fabric", W, "fabric-unstated"),
        Problem("b.toml", "sources[z].checked_on", "old", W, "stale-source"),
        Problem("c.toml", "x", "an error is not a warning"),
        Problem("d.toml", "", "something new", W),
    ]
    groups = warning_summary(problems)
    assert [(g.kind, g.count) for g in groups] == [
        ("stale-source", 2),
        ("stale-price", 1),  # ties keep the order of WARNING_KINDS
        ("fabric-unstated", 1),
        ("other", 1),  # a warning without a kind is still counted
    ]
    assert groups[0].label == WARNING_KINDS["stale-source"].label
    assert "180 days" in groups[0].meaning
    assert groups[-1].label == "other"
    assert warning_summary([Problem("c.toml", "x", "error")]) == []
