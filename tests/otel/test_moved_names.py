"""Issue 32: names that moved out of ``robota.host`` still import from there, with a warning."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import robota.host
import robota.otel

SRC = pathlib.Path(__file__).resolve().parents[2] / "src"


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


def test_type_checkers_still_refuse_a_misspelt_host_name(tmp_path: pathlib.Path) -> None:
    # The alias must not make every name of robota.host an Any to mypy: a module __getattr__
    # it can see would (a typo there type-checked until issue 32). The moved name still checks.
    user = tmp_path / "user.py"
    user.write_text(
        "import robota.host\n"
        "from robota.host import spwan\n"
        "exporter = robota.host.OpenTelemetryExporter\n"
        "robota.host.isolate_childrn()\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--strict", "--no-incremental"),
            *("--cache-dir", "/dev/null", "--no-error-summary", str(user)),
        ],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(SRC)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 2, done.stdout + done.stderr
    assert 'Module "robota.host" has no attribute "spwan"' in errors[0]
    assert 'has no attribute "isolate_childrn"' in errors[1]
