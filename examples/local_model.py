"""An agent on a local model: any OpenAI-compatible server (llama.cpp, vLLM, Ollama, LM Studio).

Run it: ``python examples/local_model.py``. It talks to ``LOCAL_MODEL_URL`` (default
``http://127.0.0.1:8080/v1``, where ``llama-server -m model.gguf --jinja`` listens) and the model
``LOCAL_MODEL`` (default ``local``; llama.cpp accepts any name). When nothing answers there it
says how to start a server and exits without error.
"""

from __future__ import annotations

import asyncio
import os

import robota
from robota.providers.openai_compatible import OpenAICompatibleProvider


@robota.tool
def get_weather(city: str) -> str:
    """The current weather in a city.

    Args:
        city: The city's name.
    """
    return f"sunny and 22 °C in {city}"


async def main() -> None:
    url = os.environ.get("LOCAL_MODEL_URL", "http://127.0.0.1:8080/v1")
    model = os.environ.get("LOCAL_MODEL", "local")
    provider = OpenAICompatibleProvider(base_url=url, name="local", max_retries=1)
    async with robota.Agent(
        provider=provider, model=model, tools=[get_weather], owns_providers=True
    ) as agent:
        try:
            stream = agent.run_stream("What is the weather in Paris?")
            async for event in stream:
                if isinstance(event, robota.TextDelta):
                    print(event.text, end="", flush=True)
                elif isinstance(event, robota.ToolCallFinished):
                    print(f"[tool {event.call.name} -> {event.content}]")
            result = await stream.result()
        except robota.NetworkError:
            print(f"no server answers at {url}; start one, e.g.:")
            print("  llama-server -m model.gguf --jinja --port 8080")
            return
    print()
    print(f"{result.status}, {result.rounds} model calls, {result.usage.total_tokens} tokens")


if __name__ == "__main__":
    asyncio.run(main())
