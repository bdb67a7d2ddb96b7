"""``robota.providers``: vendor adapters, one subpackage and one optional extra each.

* :mod:`robota.providers.openai` — OpenAI's Responses and Chat Completions APIs
  (the ``openai`` extra), registered for ``Agent(model="openai:…")``.
* :mod:`robota.providers.openai_compatible` — any OpenAI-compatible Chat Completions server.
* :mod:`robota.providers.anthropic` — Anthropic's Messages API (the ``anthropic`` extra).
* :mod:`robota.providers.gemini` — Google's Gemini API (the ``gemini`` extra).

What every SDK-based adapter shares (the call and stream drivers, the SDK object reader, the
transport error mapping) is the vendor-neutral kit in ``robota.providers._kit``.

Each adapter is imported by its path and never imports another adapter (an import-linter
contract), with one declared exception: the compatible adapter reuses the OpenAI package's Chat
Completions wire module.
"""
