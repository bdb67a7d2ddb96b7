"""Paths and the read-only classifier (S05, S21).

``_paths`` is the one containment check (:func:`~robota.host.canonical_path`,
:func:`~robota.host.is_path_inside`); ``_readonly`` classifies shell commands as read-only
(:func:`~robota.host.is_read_only_command`) with its program tables (``_readonly_programs``),
interpreter rules (``_readonly_languages``) and directory tracking (``_readonly_cwd``);
``_permissions`` builds the permission context from both.

The public names are re-exported from :mod:`robota.host`; import them from there.
"""
