"""The owner-only store and process lifetime (S07, S08, S10).

``_store`` is the owner-only store (:class:`~robota.host.OwnerOnlyStore`), with the guarded
file readers (``_regular_file``) and the owner-only SQLite file helpers (``_sqlite_files``);
``_owner`` is the owner record and the one rule that judges it; ``_lifetime`` the exit registry
and process-scoped directories; ``_marker`` process markers.

The public names are re-exported from :mod:`robota.host`; import them from there.
"""
