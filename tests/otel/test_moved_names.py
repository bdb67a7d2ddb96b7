"""Issue 32: names that moved out of ``robota.host`` still import from there, with a warning."""

from __future__ import annotations

import pytest

import robota.host
import robota.otel


def test_the_exporter_lives_in_robota_otel() -> None:
    assert robota.otel.OpenTelemetryExporter.__module__ == "robota.otel._exporter"
    assert "OpenTelemetryExporter" in robota.otel.__all__
    assert "OpenTelemetryExporter" not in robota.host.__all__


def test_the_old_host_name_still_works_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"robota\.otel\.OpenTelemetryExporter"):
        from robota.host import OpenTelemetryExporter
    assert OpenTelemetryExporter is robota.otel.OpenTelemetryExporter


def test_the_old_host_attribute_warns_too() -> None:
    with pytest.warns(DeprecationWarning, match="moved to robota.otel"):
        exporter = robota.host.OpenTelemetryExporter
    assert exporter is robota.otel.OpenTelemetryExporter


def test_an_unknown_host_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        robota.host.NoSuchName  # noqa: B018
