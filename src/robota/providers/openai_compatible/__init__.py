"""``robota.providers.openai_compatible``: any server that speaks OpenAI's Chat Completions.

:class:`OpenAICompatibleProvider` talks to vLLM, llama.cpp's ``llama-server``, Ollama, LM Studio,
OpenRouter, Groq … through the official ``openai`` SDK (the ``openai`` extra). It
shares the Chat Completions wire code with :mod:`robota.providers.openai` — the one edge allowed
between provider packages — and claims nothing about the server that the caller did not declare.
"""

from robota.providers.openai_compatible._provider import (
    BASE_URL_VARIABLE,
    OpenAICompatibleProvider,
)

__all__ = ["BASE_URL_VARIABLE", "OpenAICompatibleProvider"]
