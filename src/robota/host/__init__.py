"""``robota.host``: where the agent touches the operating system (spec S05–S11, S02).

Implementations of core's ports that need the OS live here and are passed to core explicitly;
core never reaches for them on its own.

Available now:
    ProcessEnvResolver: resolves ``$ENV:NAME`` references from the process environment.
"""

from robota.host._env import ProcessEnvResolver

__all__ = ["ProcessEnvResolver"]
