"""``robota.host.journal``: durable execution journals, the host's implementations of S40's port.

* :class:`SQLiteJournal` — the embedded default: one SQLite file, one writer per execution held
  by a crash-released file lock.
* :class:`PostgresJournal` — for workers on several machines: one PostgreSQL table, one writer
  per execution held by a session advisory lock (needs the ``postgres`` extra).
"""

from robota.host.journal._postgres import PostgresJournal
from robota.host.journal._sqlite import SQLiteJournal

__all__ = ["PostgresJournal", "SQLiteJournal"]
