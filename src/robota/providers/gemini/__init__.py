"""``robota.providers.gemini``: Google Gemini's models, and Gemini's facts, owned here (S02).

* :class:`GeminiProvider` — ``generateContent`` over the official ``google-genai`` SDK
  (the ``gemini`` extra; the SDK loads only when a provider is built).
* The source-dated model table (context windows, thinking controls, prices), registered into
  core's registries when this package is imported (S04, S13).
* The tool-schema projection policy for Gemini function declarations (S17).
"""

from robota.providers.gemini._models import register_gemini_models
from robota.providers.gemini._projection import GEMINI_POLICY
from robota.providers.gemini._provider import GeminiProvider

register_gemini_models("gemini")

__all__ = ["GEMINI_POLICY", "GeminiProvider"]
