"""``robota.providers.openai``: OpenAI's facts, owned here (S02).

So far this package holds the tool-schema projection policies for OpenAI's function calling
(S17). The adapter itself (Responses and Chat Completions over the official SDK) is not built
yet; see the README's status table.
"""

from robota.providers.openai._projection import OPENAI_POLICY, OPENAI_STRICT_POLICY

__all__ = ["OPENAI_POLICY", "OPENAI_STRICT_POLICY"]
