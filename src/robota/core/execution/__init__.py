"""The run loop and what surrounds it (S37-S40).

The round loop, its guards, structured output, streaming, the response cache, the journal port
and durable runs. Internal modules only; the public names are re-exported from :mod:`robota`
(the low-level ones from :mod:`robota.lowlevel`). A regular package, not a namespace one, so
import-linter sees its modules (issue 32).
"""
