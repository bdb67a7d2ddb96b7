"""``robota.providers.openai``: OpenAI's models, and OpenAI's facts, owned here (S02).

* :class:`OpenAIProvider` — the Responses (default) or Chat Completions API over the official
  ``openai`` SDK (the ``openai`` extra; the SDK loads only when a provider is built).
* The source-dated model table (capabilities, effort levels, context windows, prices), registered
  into core's registries when this package is imported (S04, S13).
* The tool-schema projection policies for OpenAI's function calling (S17).
"""

from robota.providers.openai._models import register_openai_models
from robota.providers.openai._projection import OPENAI_POLICY, OPENAI_STRICT_POLICY
from robota.providers.openai._provider import OpenAIAPI, OpenAIProvider

register_openai_models("openai")

__all__ = ["OPENAI_POLICY", "OPENAI_STRICT_POLICY", "OpenAIAPI", "OpenAIProvider"]
