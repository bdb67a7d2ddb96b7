"""Child processes and hook executors (S09, S22).

``_children`` spawns children in their own sessions (:func:`~robota.host.spawn`) and ends their
groups; ``_hooks`` runs command and HTTP hooks
(:class:`~robota.host.CommandHookExecutor`, :class:`~robota.host.HttpHookExecutor`).

The public names are re-exported from :mod:`robota.host`; import them from there.
"""
