"""``robota.providers.gemini``: Google Gemini's facts, owned here (S02).

So far this package holds the tool-schema projection policy (S17). The adapter itself (over the
official ``google-genai`` SDK) is not built yet; see the README's status table.
"""

from robota.providers.gemini._projection import GEMINI_POLICY

__all__ = ["GEMINI_POLICY"]
