"""``robota.otel``: a run's events exported as OpenTelemetry spans (S27, S33).

:class:`OpenTelemetryExporter` is an event service (``Agent(event_service=...)``) that exports
runs, provider calls and tool bodies as spans, with span ids derived as S27 states. It needs the
``otel`` extra (``opentelemetry-api`` and ``-sdk``).

It touches no part of the operating system, so it is an integration above core beside
``robota.mcp`` and ``robota.temporal`` (DESIGN.md's layer table) and imports core only. Until
issue 32 it was ``robota.host.OpenTelemetryExporter``; that name still works, with a
:class:`DeprecationWarning`.
"""

from robota.otel._exporter import OpenTelemetryExporter

__all__ = ["OpenTelemetryExporter"]
