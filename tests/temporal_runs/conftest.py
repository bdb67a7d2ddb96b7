"""The Temporal tests' fixtures live in :mod:`temporal_runs.engine`."""

from temporal_runs.engine import (
    client,
    journal_spec,
    queue,
    temporal_address,
    workers,
)

__all__ = ["client", "journal_spec", "queue", "temporal_address", "workers"]
