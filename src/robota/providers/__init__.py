"""``robota.providers``: vendor adapters, one subpackage and one optional extra each.

Each adapter is imported by its path (``robota.providers.openai`` …) and never imports another
adapter (an import-linter contract). No adapter exists yet; see the README's status table.
"""
