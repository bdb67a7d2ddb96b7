"""Owner records and the one rule that judges them (S08, S10).

A pid alone is no identity — it is recycled, a containerised process is often pid 1, and
containers sharing a state root each number their own processes — so an :class:`OwnerRecord`
carries the machine (host name and machine id), the pid with its start time, the boot, and on
Linux the pid namespace. :func:`owner_state` judges a record with one three-valued rule, shared
by process-scoped directories (:mod:`._lifetime`) and process markers (:mod:`._marker`, S10) so
the two never disagree about whether a process runs.

The lowest module of the store-and-lifetime group: it imports nothing else of ``robota.host``,
so the errors that name an owner (:class:`~robota.host.MarkerHeldError`) can refer to it without
an import cycle. :class:`OwnerRecordError` is defined here for the same reason and is listed
with the other host errors in ``robota.host._errors``.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

from robota.core import RobotaError

__all__ = ["OWNER_RECORD_NAME", "OwnerRecord", "OwnerRecordError", "OwnerState", "owner_state"]

OwnerState: TypeAlias = Literal["alive", "gone", "unknown"]
"""The three-valued judgement of a recorded owner (S08)."""

OWNER_RECORD_NAME: Final = ".robota-owner.json"
"""The file inside a process-scoped directory that names its owner; written first (S08)."""

_RECORD_FORMAT: Final = "robota.owner/1"
_MACHINE_ID_FILES: Final = ("/etc/machine-id", "/var/lib/dbus/machine-id")
_BOOT_ID_FILE: Final = "/proc/sys/kernel/random/boot_id"


class OwnerRecordError(RobotaError, ValueError):
    """An owner record could not be decoded (S08).

    Not JSON, another format, or a field of the wrong type. A directory or marker whose record
    is unreadable counts as owner ``"unknown"``.
    """

    default_code = "owner_record"


# --- owner records ---------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OwnerRecord:
    """Who owns a process-scoped directory or a process marker (S08, S10).

    Every field but ``pid`` may be ``None`` where the platform does not offer it (no machine id,
    no ``/proc``, not Linux). A missing part is never a wildcard: :func:`owner_state` treats a
    part only one side could read as a difference.

    Attributes:
        host: The host name.
        machine_id: ``/etc/machine-id`` (or ``/var/lib/dbus/machine-id``), where readable.
        pid: The process id, as this process's pid namespace numbers it.
        start_time: The process start time in clock ticks since boot (``/proc/<pid>/stat``
            field 22).
        boot_id: ``/proc/sys/kernel/random/boot_id``: changes with every boot.
        pid_namespace: ``readlink /proc/self/ns/pid`` (``"pid:[4026531836]"``).
    """

    host: str | None
    machine_id: str | None
    pid: int
    start_time: int | None
    boot_id: str | None
    pid_namespace: str | None

    @classmethod
    def current(cls) -> OwnerRecord:
        """The record of this process, read now (a forked child gets its own)."""
        pid = os.getpid()
        process = _read_process(pid)
        here = _Machine.current()
        return cls(
            host=here.host,
            machine_id=here.machine_id,
            pid=pid,
            start_time=process.start_time if process is not None else None,
            boot_id=here.boot_id,
            pid_namespace=here.pid_namespace,
        )

    def as_dict(self) -> dict[str, str | int | None]:
        """The record as a JSON-ready mapping (with its format tag)."""
        return {
            "format": _RECORD_FORMAT,
            "host": self.host,
            "machine_id": self.machine_id,
            "pid": self.pid,
            "start_time": self.start_time,
            "boot_id": self.boot_id,
            "pid_namespace": self.pid_namespace,
        }

    @classmethod
    def from_dict(cls, data: object) -> OwnerRecord:
        """Decode :meth:`as_dict` output.

        Raises:
            OwnerRecordError: not a record of this format, or a field of the wrong type.
        """
        if not isinstance(data, dict) or data.get("format") != _RECORD_FORMAT:
            raise OwnerRecordError(f"not an owner record of format {_RECORD_FORMAT!r}")
        pid = data.get("pid")
        start_time = data.get("start_time")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid < 1:
            raise OwnerRecordError(f"owner record has an invalid pid: {pid!r}")
        if start_time is not None and (
            not isinstance(start_time, int) or isinstance(start_time, bool) or start_time < 0
        ):
            raise OwnerRecordError(f"owner record has an invalid start time: {start_time!r}")
        texts: dict[str, str | None] = {}
        for key in ("host", "machine_id", "boot_id", "pid_namespace"):
            value = data.get(key)
            if value is not None and (not isinstance(value, str) or not value):
                raise OwnerRecordError(f"owner record has an invalid {key}: {value!r}")
            texts[key] = value
        return cls(
            host=texts["host"],
            machine_id=texts["machine_id"],
            pid=pid,
            start_time=start_time,
            boot_id=texts["boot_id"],
            pid_namespace=texts["pid_namespace"],
        )

    def to_json(self) -> bytes:
        """The record as UTF-8 JSON, as written to disk."""
        return json.dumps(self.as_dict(), sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> OwnerRecord:
        """Decode :meth:`to_json` output.

        Raises:
            OwnerRecordError: not UTF-8 JSON, or not a valid record.
        """
        try:
            decoded = json.loads(data.decode())
        except (UnicodeDecodeError, ValueError) as exc:
            raise OwnerRecordError(f"owner record is not JSON: {exc}", cause=exc) from exc
        return cls.from_dict(decoded)

    def describe(self) -> str:
        """A one-line description for messages: pid, host, machine, boot and namespace."""
        parts = [f"pid {self.pid}", f"on host {self.host or '(unnamed)'}"]
        if self.machine_id is not None:
            parts.append(f"machine {self.machine_id}")
        if self.boot_id is not None:
            parts.append(f"boot {self.boot_id}")
        if self.pid_namespace is not None:
            parts.append(f"namespace {self.pid_namespace}")
        return ", ".join(parts)


def owner_state(record: OwnerRecord) -> OwnerState:
    """Judge whether the owner ``record`` names can still be running (S08).

    ``"alive"`` only on this machine, boot and pid namespace, with a recorded start time the
    live pid still has. ``"gone"`` only when provable: this machine and an earlier boot, or this
    machine, boot and namespace with the pid gone or started at another time. Everything else is
    ``"unknown"`` — a caller that must not act while another owner runs keeps those.
    """
    here = _Machine.current()  # this process's own pid and start time are not needed
    if not _same_machine(record, here):
        # S08: another machine, or a record that does not name its machine: its boot differs,
        # its pid means nothing here, and every Linux machine shows the same initial namespace.
        return "unknown"
    if record.boot_id is not None and here.boot_id is not None and record.boot_id != here.boot_id:
        return "gone"  # S08: this machine, an earlier boot
    if record.boot_id != here.boot_id:
        return "unknown"  # only one side knows the boot
    if record.pid_namespace != here.pid_namespace:
        return "unknown"  # S08: may be live in another container
    process = _read_process(record.pid)
    if process is None:
        return "unknown"
    if not process.running:
        return "gone"  # S08: the pid is gone on this machine, boot and namespace
    if record.start_time is None or process.start_time is None:
        return "unknown"  # a live pid without a start time to compare is no identity
    return "alive" if process.start_time == record.start_time else "gone"


@dataclass(frozen=True, slots=True)
class _Machine:
    """Where this process runs: the parts of an owner record that are not the process's own."""

    host: str | None
    machine_id: str | None
    boot_id: str | None
    pid_namespace: str | None

    @classmethod
    def current(cls) -> _Machine:
        return cls(_host_name(), _machine_id(), _read_text(_BOOT_ID_FILE), _pid_namespace())


def _same_machine(record: OwnerRecord, here: _Machine) -> bool:
    # S08: the machine matches only when every part either record carries is equal in both;
    # a part only one side could read may belong to another machine.
    parts = ((record.host, here.host), (record.machine_id, here.machine_id))
    if all(theirs is None for theirs, _ in parts):
        return False  # the record does not name its machine
    return all(theirs == ours for theirs, ours in parts)


@dataclass(frozen=True, slots=True)
class _Process:
    running: bool
    start_time: int | None


def _read_process(pid: int) -> _Process | None:
    """Whether ``pid`` runs in this namespace, and its start time; ``None`` when undecidable."""
    if os.name != "posix":
        return None  # os.kill(pid, 0) would terminate the process on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return _Process(running=False, start_time=None)
    except PermissionError:
        pass  # it exists, under another account
    except OSError:
        return None
    if not _proc_is_ours():
        return _Process(running=True, start_time=None)
    fields = _stat_fields(pid)
    if fields is None:
        # Exited between the two reads, or /proc refuses: ask the kernel once more.
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return _Process(running=False, start_time=None)
        except OSError:
            pass
        return _Process(running=True, start_time=None)
    # fields[0] is field 3 (state), so field 22 (starttime) is fields[19].
    state, start = fields[0], fields[19]
    if state in ("Z", "X"):
        # A zombie has exited and can never run again; only its pid is held until a parent
        # reaps it. Where PID 1 does not reap (some containers and sandboxes), an orphan's
        # zombie lingers indefinitely, and counting it alive would keep its directory forever.
        return _Process(running=False, start_time=None)
    return _Process(running=True, start_time=int(start) if start.isdigit() else None)


def _stat_fields(pid: int) -> list[str] | None:
    text = _read_text(f"/proc/{pid}/stat")
    if text is None:
        return None
    # The command name (field 2) is parenthesised and may itself contain spaces and ")".
    _, _, rest = text.rpartition(")")
    fields = rest.split()
    return fields if len(fields) >= 20 else None


def _proc_is_ours() -> bool:
    # /proc numbers processes as the namespace that mounted it; a /proc from another pid
    # namespace would answer about unrelated processes.
    text = _read_text("/proc/self/stat")
    return text is not None and text.split(" ", 1)[0] == str(os.getpid())


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            text = stream.read().strip()
    except OSError:
        return None
    return text or None


def _host_name() -> str | None:
    try:
        return socket.gethostname() or None
    except OSError:
        return None


def _machine_id() -> str | None:
    for path in _MACHINE_ID_FILES:
        value = _read_text(path)
        if value is not None:
            return value
    return None


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
