"""``robota.providers.anthropic``: Anthropic's facts, owned here (S02).

So far this package holds the tool-schema projection policy (S17). The adapter itself (the
Messages API over the official SDK) is not built yet; see the README's status table.
"""

from robota.providers.anthropic._projection import ANTHROPIC_POLICY

__all__ = ["ANTHROPIC_POLICY"]
