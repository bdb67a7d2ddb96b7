"""The install command every "missing extra" error gives (issue 25).

Each case puts a real ``robota-*.dist-info`` directory at the front of ``sys.path``, so
``importlib.metadata`` finds it before the real installation, and reads what pip would record.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from robota.core._install import install_command

_FALLBACK = 'pip install -e ".[openai]" (run it in your Robota checkout)'


def _install_record(site: Path, direct_url: object | None, *, raw: str | None = None) -> None:
    """A dist-info for ``robota`` in ``site``, with ``direct_url.json`` as pip writes it."""
    info = site / "robota-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: robota\nVersion: 0.1.0\n")
    if raw is not None:
        (info / "direct_url.json").write_text(raw)
    elif direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "site-packages"
    where.mkdir()
    monkeypatch.syspath_prepend(str(where))  # also invalidates the import caches
    return where


def _checkout(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "pyproject.toml").write_text("[project]\nname = 'robota'\n")
    return path


def test_an_editable_install_repeats_its_checkout(site: Path, tmp_path: Path) -> None:
    checkout = _checkout(tmp_path / "robota")
    _install_record(site, {"url": checkout.as_uri(), "dir_info": {"editable": True}})
    assert install_command("openai") == f'pip install -e "{checkout}[openai]"'
    assert install_command("openai,keyring") == f'pip install -e "{checkout}[openai,keyring]"'


def test_an_install_from_a_directory_repeats_it_without_editable(
    site: Path, tmp_path: Path
) -> None:
    checkout = _checkout(tmp_path / "src" / "robota")
    _install_record(site, {"url": checkout.as_uri(), "dir_info": {}})
    assert install_command("postgres") == f'pip install "{checkout}[postgres]"'


def test_a_checkout_path_with_spaces_and_shell_characters_stays_one_word(
    site: Path, tmp_path: Path
) -> None:
    checkout = _checkout(tmp_path / "my $HOME copy")
    _install_record(site, {"url": checkout.as_uri(), "dir_info": {"editable": True}})
    command = install_command("openai")
    assert command == f"pip install -e '{checkout}[openai]'"
    assert "%20" not in command  # the file: URL was decoded


def test_a_git_install_pins_the_recorded_commit(site: Path) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567"
    url = "https://example.org/robota-py.git"
    _install_record(
        site,
        {"url": url, "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": "main"}},
    )
    command = install_command("openai")
    assert command == f'pip install "robota[openai] @ git+{url}@{commit}"'
    requirement = Requirement(command.removeprefix("pip install ").strip('"'))
    assert (requirement.name, requirement.extras) == ("robota", {"openai"})
    assert requirement.url == f"git+{url}@{commit}"


def test_a_git_install_from_a_subdirectory_keeps_it(site: Path) -> None:
    url = "ssh://git@example.org/mono.git"
    _install_record(
        site,
        {"url": url, "vcs_info": {"vcs": "git", "commit_id": "abc123"}, "subdirectory": "py"},
    )
    assert install_command("mcp") == (
        f'pip install "robota[mcp] @ git+{url}@abc123#subdirectory=py"'
    )


def test_an_archive_install_names_the_archive(site: Path, tmp_path: Path) -> None:
    wheel = tmp_path / "robota-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    _install_record(site, {"url": wheel.as_uri(), "archive_info": {}})
    assert install_command("otel") == f'pip install "robota[otel] @ {wheel.as_uri()}"'


def test_a_remote_archive_is_named_as_recorded(site: Path) -> None:
    url = "https://example.org/dist/robota-0.1.0.tar.gz"
    _install_record(site, {"url": url, "archive_info": {"hashes": {}}})
    assert install_command("gemini") == f'pip install "robota[gemini] @ {url}"'


@pytest.mark.parametrize(
    "record",
    [
        None,  # installed from an index, or no record at all
        {"url": "file:///nonexistent/robota-checkout", "dir_info": {"editable": True}},
        {"url": "file:///nonexistent/robota-0.1.0.whl", "archive_info": {}},
        {"url": "", "dir_info": {}},
        {"url": "https://example.org/x"},  # none of the three kinds
        ["not", "an", "object"],
    ],
    ids=["no-record", "moved-checkout", "deleted-wheel", "empty-url", "unknown-kind", "not-a-dict"],
)
def test_without_a_usable_record_it_says_to_install_from_the_checkout(
    site: Path, record: object
) -> None:
    _install_record(site, record)
    assert install_command("openai") == _FALLBACK


def test_an_unreadable_record_falls_back(site: Path) -> None:
    _install_record(site, None, raw="{not json")
    assert install_command("openai") == _FALLBACK


def test_not_an_extra_name_is_refused() -> None:
    with pytest.raises(ValueError, match="extra"):
        install_command('openai]" ; echo')


def test_a_missing_sdk_error_carries_the_recorded_command(tmp_path: Path) -> None:
    """End to end: the provider's error, in a fresh interpreter that sees the git record."""
    site = tmp_path / "site-packages"
    site.mkdir()
    url = "https://example.org/robota-py.git"
    _install_record(site, {"url": url, "vcs_info": {"vcs": "git", "commit_id": "feedbeef"}})
    code = (
        "import sys; sys.modules['openai'] = None\n"
        f"sys.path.insert(0, {str(site)!r})\n"
        "from robota.providers.openai import OpenAIProvider\n"
        "try:\n    OpenAIProvider(api_key='k')\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.startswith("ConfigurationError "), done.stderr
    assert f'run: pip install "robota[openai] @ git+{url}@feedbeef"' in done.stdout


# Every "missing extra" error in the package, each in a fresh interpreter where the extra's
# module cannot be imported: (extra, module made unimportable, code that needs it).
_MISSING_EXTRA_SITES = [
    ("openai", "openai", "from robota.providers.openai import OpenAIProvider as P; P(api_key='k')"),
    (
        "anthropic",
        "anthropic",
        "from robota.providers.anthropic import AnthropicProvider as P; P(api_key='k')",
    ),
    (
        "gemini",
        "google.genai",
        "from robota.providers.gemini import GeminiProvider as P; P(api_key='k')",
    ),
    ("postgres", "psycopg", "from robota.host import PostgresJournal; PostgresJournal('host=x')"),
    ("otel", "opentelemetry", "from robota.otel import OpenTelemetryExporter as E; E()"),
    ("keyring", "keyring", "from robota.host import KeyringCredentialStore as K; K()"),
    ("mcp", "mcp", "from robota.mcp import MCPServerStdio as S; S(sys.executable)"),
]


@pytest.mark.parametrize(
    ("extra", "module", "code"), _MISSING_EXTRA_SITES, ids=[s[0] for s in _MISSING_EXTRA_SITES]
)
def test_every_missing_extra_error_gives_the_one_install_command(
    extra: str, module: str, code: str
) -> None:
    program = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "import robota\n"
        f"try:\n    {code}\n"
        "except robota.ConfigurationError as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    assert install_command(extra) in done.stdout, (done.stdout, done.stderr)


def test_the_temporal_command_without_its_extra_gives_the_one_install_command() -> None:
    program = (
        "import sys; sys.modules['temporalio'] = None\n"
        "from robota.cli import main\n"
        "sys.exit(main(['temporal', 'worker', '--agents', 'x:y', '--task-queue', 'q']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode != 0
    assert install_command("temporal") in done.stderr, done.stderr
