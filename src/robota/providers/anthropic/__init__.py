"""``robota.providers.anthropic``: Anthropic's models, and Anthropic's facts, owned here (S02).

* :class:`AnthropicProvider` — the Messages API over the official ``anthropic`` SDK
  (the ``anthropic`` extra; the SDK loads only when a provider is built).
* The source-dated model table (capabilities, thinking budgets, context windows, prices),
  registered into core's registries when this package is imported (S04, S13).
* The tool-schema projection policy (S17).
"""

from robota.providers.anthropic._models import register_anthropic_models
from robota.providers.anthropic._projection import ANTHROPIC_POLICY
from robota.providers.anthropic._provider import AnthropicProvider

register_anthropic_models("anthropic")

__all__ = ["ANTHROPIC_POLICY", "AnthropicProvider"]
