"""Domain types shared by every layer: ids, units, enums and frozen records."""
