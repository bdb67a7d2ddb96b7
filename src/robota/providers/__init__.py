"""``robota.providers``: vendor adapters, one subpackage and one optional extra each.

* :mod:`robota.providers.openai` — OpenAI's Responses and Chat Completions APIs
  (``pip install "robota[openai]"``), registered for ``Agent(model="openai:…")``.
* :mod:`robota.providers.openai_compatible` — any OpenAI-compatible Chat Completions server.

Each adapter is imported by its path and never imports another adapter (an import-linter
contract), with one declared exception: the compatible adapter reuses the OpenAI package's Chat
Completions wire module.
"""
