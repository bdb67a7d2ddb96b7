"""``robota.host``: where the agent touches the operating system (spec S05–S11, S02, S22).

Implementations of core's ports that need the OS live here and are passed to core explicitly;
core never reaches for them on its own.

* Paths (S05): :func:`canonical_path`, :func:`is_path_inside` — the one containment check.
* Egress (S06): :func:`check_url`, :class:`EgressClient` (pinned transport, checked redirects),
  :class:`EgressTransport` (the same policy under a library's own ``httpx2`` client);
  :class:`MediaFetchError` when a provider adapter cannot fetch a media URL through it.
* Owner-only store (S07): :class:`OwnerOnlyStore`.
* Process lifetime (S08): :class:`ProcessScopedDirectory`, :func:`owner_state`, the exit
  registry (:func:`register_at_exit`).
* Children's sessions (S09): :func:`spawn`, :func:`isolate_children`.
* Process markers (S10): :class:`ProcessMarker`.
* Credentials and sealing (S11): :class:`FileCredentialStore`, :class:`KeyringCredentialStore`,
  :class:`Sealer`; API keys by the one lookup order the library and the command share
  (:func:`find_api_key`, :func:`require_api_key`, :func:`default_credential_store`).
* Hooks (S22): :class:`CommandHookExecutor`, :class:`HttpHookExecutor`.
* Permissions (S21): :func:`is_read_only_command`, :func:`read_only_reason`,
  :func:`permission_context`.
* ``$ENV:`` references (S02): :class:`ProcessEnvResolver`.
* Execution journals (S40): :class:`SQLiteJournal`, :class:`PostgresJournal`.
* Moved out (issue 32): ``OpenTelemetryExporter`` is :class:`robota.otel.OpenTelemetryExporter`
  (it touches nothing of the OS); the old name here still works, with a
  :class:`DeprecationWarning`.
* For stores built on SQLite (the journal, ``robota.sessions``): :func:`prepare_owner_only_database`
  (S07) and :func:`try_lock_file` (a crash-released writer lock, S10).
"""

from typing import TYPE_CHECKING, Any

#: S11 asks for these two names on the host sealer; they are core's error classes.
from robota.core import CorruptError, LockedError
from robota.host._errors import (
    EntryExistsError,
    InsecureModeError,
    LeaseRefusedError,
    LockTimeoutError,
    MarkerError,
    MarkerHeldError,
    MarkerLostError,
    MediaFetchError,
    ModeNotEnforcedError,
    OwnerRecordError,
    ResponseTooLargeError,
    StagingStateError,
    StoreError,
    UnconfirmedWriteError,
)
from robota.host.credentials._api_keys import (
    API_KEY_ACCOUNT,
    CREDENTIAL_STORE_VARIABLE,
    MISSING_API_KEY,
    ApiKey,
    CredentialStoreChoice,
    api_key_hint,
    credential_file_path,
    default_credential_store,
    find_api_key,
    require_api_key,
)
from robota.host.credentials._credential_file import FileCredentialStore, KeyringCredentialStore
from robota.host.credentials._env import ProcessEnvResolver
from robota.host.credentials._sealer import Sealer, create_key_files, load_sealer
from robota.host.egress._client import (
    EgressClient,
    EgressRefused,
    EgressResult,
    EgressTransport,
    Fetched,
)
from robota.host.egress._policy import (
    BLOCKED_HOSTNAMES,
    Allowed,
    EgressDecision,
    LoopbackAllowance,
    Rejected,
    Resolver,
    check_url,
    classify_address,
    parse_ip_literal,
)
from robota.host.journal import PostgresJournal, SQLiteJournal
from robota.host.paths._paths import canonical_path, is_path_inside
from robota.host.paths._permissions import permission_context
from robota.host.paths._readonly import READ_ONLY_COMMANDS, is_read_only_command, read_only_reason
from robota.host.processes._children import (
    children_isolated,
    isolate_children,
    signal_group,
    spawn,
)
from robota.host.processes._hooks import CommandHookExecutor, HttpHookExecutor
from robota.host.store._lifetime import (
    OWNER_RECORD_NAME,
    ExitRegistration,
    OwnerRecord,
    OwnerState,
    ProcessScopedDirectory,
    ScopedDirectoryReport,
    SweepResult,
    owner_state,
    register_at_exit,
    run_exit_callbacks,
)
from robota.host.store._marker import MarkerReport, MarkerState, OperationLock, ProcessMarker
from robota.host.store._sqlite_files import prepare_owner_only_database, try_lock_file
from robota.host.store._store import (
    DIRECTORY_MODE,
    FILE_MODE,
    OwnerOnlyStore,
    StagedReplace,
    StoreGuarantee,
)

if TYPE_CHECKING:
    from robota.otel import OpenTelemetryExporter as OpenTelemetryExporter

__all__ = [
    "API_KEY_ACCOUNT",
    "BLOCKED_HOSTNAMES",
    "CREDENTIAL_STORE_VARIABLE",
    "DIRECTORY_MODE",
    "FILE_MODE",
    "MISSING_API_KEY",
    "OWNER_RECORD_NAME",
    "READ_ONLY_COMMANDS",
    "Allowed",
    "ApiKey",
    "CommandHookExecutor",
    "CorruptError",
    "CredentialStoreChoice",
    "EgressClient",
    "EgressDecision",
    "EgressRefused",
    "EgressResult",
    "EgressTransport",
    "EntryExistsError",
    "ExitRegistration",
    "Fetched",
    "FileCredentialStore",
    "HttpHookExecutor",
    "InsecureModeError",
    "KeyringCredentialStore",
    "LeaseRefusedError",
    "LockTimeoutError",
    "LockedError",
    "LoopbackAllowance",
    "MarkerError",
    "MarkerHeldError",
    "MarkerLostError",
    "MarkerReport",
    "MarkerState",
    "MediaFetchError",
    "ModeNotEnforcedError",
    "OperationLock",
    "OwnerOnlyStore",
    "OwnerRecord",
    "OwnerRecordError",
    "OwnerState",
    "PostgresJournal",
    "ProcessEnvResolver",
    "ProcessMarker",
    "ProcessScopedDirectory",
    "Rejected",
    "Resolver",
    "ResponseTooLargeError",
    "SQLiteJournal",
    "ScopedDirectoryReport",
    "Sealer",
    "StagedReplace",
    "StagingStateError",
    "StoreError",
    "StoreGuarantee",
    "SweepResult",
    "UnconfirmedWriteError",
    "api_key_hint",
    "canonical_path",
    "check_url",
    "children_isolated",
    "classify_address",
    "create_key_files",
    "credential_file_path",
    "default_credential_store",
    "find_api_key",
    "is_path_inside",
    "is_read_only_command",
    "isolate_children",
    "load_sealer",
    "owner_state",
    "parse_ip_literal",
    "permission_context",
    "prepare_owner_only_database",
    "read_only_reason",
    "register_at_exit",
    "require_api_key",
    "run_exit_callbacks",
    "signal_group",
    "spawn",
    "try_lock_file",
]


# Hidden from type checkers: a module ``__getattr__`` they can see makes every name of
# robota.host an ``Any`` to them, so a misspelt name would type-check. They get the moved name
# from the TYPE_CHECKING import above instead.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """Names moved out of ``robota.host`` (issue 32), with a :class:`DeprecationWarning`."""
        if name == "OpenTelemetryExporter":
            import warnings  # noqa: PLC0415 - only a deprecated name pays for it

            warnings.warn(
                "robota.host.OpenTelemetryExporter moved to robota.otel.OpenTelemetryExporter; "
                "import it from there (the old name will be removed in a later release)",
                DeprecationWarning,
                stacklevel=2,
            )
            from robota.otel import OpenTelemetryExporter  # noqa: PLC0415 - above host's layer

            return OpenTelemetryExporter
        raise AttributeError(f"module 'robota.host' has no attribute {name!r}")
