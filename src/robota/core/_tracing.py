"""Trusted trace context (S27): W3C trace context the host supplies, and nothing ambient.

A run carries trace context only when its host passes one
(``agent.run(..., trace=TraceContext.from_traceparent(...))``); this package never reads
``TRACEPARENT`` from its own environment, nor an ambient OpenTelemetry context.

Span ids are never random here: each is derived from an id this package minted — the execution's,
a provider call's, a tool body's — by :func:`derive_span_id`, the same function the exporter
uses, so the parent a vendor or a child process sees is a span the exported trace contains.

Disclosure is granted twice, separately:

- ``origins`` — an adapter or tool sends the ``traceparent`` header only to a URL whose origin
  exactly equals one of them;
- ``children`` — the classes of child process given ``TRACEPARENT``: ``"tools"`` (a tool body's
  subprocesses, through :meth:`robota.ToolContext.child_env`, naming the body's span) and
  ``"hooks"`` (command hooks, naming the run's span). Each gets it in a fresh copy of the
  environment, never by changing this process's own, with the ambient ``TRACESTATE`` dropped.

Both default to nothing (S27: "child processes are a separate grant"): listing origins for a
provider does not also hand the trace to every command hook and tool subprocess, which would
disclose the trace identifiers to whatever those programs report to. A host that wants its
children traced says so: ``children=["tools", "hooks"]``.

A child without the grant — in a traced run, or in a run with no trace context — gets no
``TRACEPARENT``/``TRACESTATE`` at all (:func:`child_environment` with ``strip=True``): the ones in
the environment it is started from are ambient, and passing them on would parent the child's
spans under the host process's caller, in another trace than the run's own (whose exported tree
is a root without host context). One rule for every child, so a hook and a tool's subprocess of
one run always agree, and adding a trace context never discloses more than leaving it out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, final

from robota.core._errors import ConfigurationError

__all__ = [
    "ChildTraceClass",
    "ProviderTrace",
    "TraceContext",
    "body_span_key",
    "check_trace",
    "child_environment",
    "derive_span_id",
    "origin_of",
]

ChildTraceClass: TypeAlias = Literal["tools", "hooks"]
"""A class of child process the host lets see ``TRACEPARENT`` (S27)."""

_CHILD_CLASSES: Final = ("tools", "hooks")
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")
_TRACESTATE_MAX: Final = 512
_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_HEX16 = re.compile(r"^[0-9a-f]{16}$")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
# Core parses URLs itself (S02: no networking module): scheme, authority, and what follows.
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]*)([^?#]*)([?#].*)?$")
_AUTHORITY = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[^:\[\]]+)(?::([0-9]{1,5}))?$")


def derive_span_id(key: str) -> str:
    """The span id (16 lowercase hex digits, never all zero) for the id ``key`` (S27).

    The one derivation: the runtime uses it for the traceparent it hands out, the exporter for
    the span it exports, so both name the same span.
    """
    digest = hashlib.sha256(b"robota-span\x00" + key.encode("utf-8", "surrogatepass")).hexdigest()
    span = digest[:16]
    return span if span != "0" * 16 else digest[16:32]


def _split(url: str) -> tuple[str, str, str] | None:
    """``(origin, path, rest)`` of an absolute http(s) URL without credentials, else ``None``."""
    match = _URL.match(url.strip())
    if match is None:
        return None
    scheme, authority, path, rest = match.groups()
    scheme = scheme.lower()
    if scheme not in _DEFAULT_PORTS or "@" in authority:
        return None
    parts = _AUTHORITY.match(authority)
    if parts is None:
        return None
    host, port_text = parts.group(1).lower(), parts.group(2)
    port = int(port_text) if port_text else _DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        return None
    origin = f"{scheme}://{host}" if port == _DEFAULT_PORTS[scheme] else f"{scheme}://{host}:{port}"
    return origin, path, rest or ""


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL, lowercased, default port dropped.

    ``None`` for anything else, a URL with credentials in it included (it is sent nothing).
    """
    given: object = url  # untyped callers can pass anything
    parts = _split(given) if isinstance(given, str) else None
    return parts[0] if parts is not None else None


def _check_tracestate(value: object) -> None:
    if value is None:
        return
    if (
        not isinstance(value, str)
        or len(value) > _TRACESTATE_MAX
        or any(not (0x20 <= ord(ch) < 0x7F) for ch in value)
    ):
        raise ConfigurationError(
            f"tracestate must be printable ASCII of at most {_TRACESTATE_MAX} characters, "
            f"got {value!r}"
        )


def _check_origin(value: object) -> str:
    parts = _split(value) if isinstance(value, str) else None
    if parts is None or parts[1] not in ("", "/") or parts[2]:
        raise ConfigurationError(
            f"a trace origin is http(s)://host[:port] with no path, query or credentials "
            f"(e.g. 'https://api.openai.com'), got {value!r}"
        )
    return parts[0]


@final
@dataclass(frozen=True, slots=True)
class TraceContext:
    """The W3C trace context a host supplies for one run (S27).

    Build it with :meth:`from_traceparent`. Pass it as ``agent.run(..., trace=...)``.

    Attributes:
        trace_id: 32 lowercase hex digits.
        parent_span_id: The host's span the run's span is a child of (16 hex digits).
        trace_flags: The W3C flags byte (``1``: sampled).
        tracestate: The host's ``tracestate``, sent beside each traceparent, or ``None``.
        origins: Origins the ``traceparent`` header may be sent to, exactly compared.
        children: Classes of child process given ``TRACEPARENT`` (see the module docstring);
            none unless granted.
    """

    trace_id: str
    parent_span_id: str
    trace_flags: int = 1
    tracestate: str | None = None
    origins: tuple[str, ...] = ()
    children: frozenset[ChildTraceClass] = frozenset()

    def __post_init__(self) -> None:
        # Built directly or parsed, the same rules: nothing malformed reaches a header.
        trace_id: object = self.trace_id
        span_id: object = self.parent_span_id
        flags: object = self.trace_flags
        if not (isinstance(trace_id, str) and _HEX32.match(trace_id) and trace_id != "0" * 32):
            raise ConfigurationError(
                f"trace_id must be 32 lowercase hex digits, not all zero; got {trace_id!r}"
            )
        if not (isinstance(span_id, str) and _HEX16.match(span_id) and span_id != "0" * 16):
            raise ConfigurationError(
                f"parent_span_id must be 16 lowercase hex digits, not all zero; got {span_id!r}"
            )
        if isinstance(flags, bool) or not isinstance(flags, int) or not 0 <= flags <= 0xFF:
            raise ConfigurationError(f"trace_flags must be an integer 0-255, got {flags!r}")
        _check_tracestate(self.tracestate)
        origins: object = self.origins
        if not isinstance(origins, tuple):
            raise ConfigurationError("origins must be a tuple of origins (use from_traceparent)")
        for origin in origins:
            if _check_origin(origin) != origin:
                raise ConfigurationError(
                    f"origin {origin!r} is not normalised; build the context with from_traceparent"
                )
        children: object = self.children
        if not isinstance(children, frozenset) or not children <= set(_CHILD_CLASSES):
            raise ConfigurationError(
                f"children must be a frozenset of {_CHILD_CLASSES}, got {children!r}"
            )

    @classmethod
    def from_traceparent(
        cls,
        traceparent: str,
        *,
        origins: Iterable[str] = (),
        tracestate: str | None = None,
        children: Iterable[ChildTraceClass] = (),
    ) -> TraceContext:
        """Parse a W3C ``traceparent`` (``00-<trace id>-<span id>-<flags>``).

        Args:
            traceparent: The host's own traceparent: its span becomes the run's parent.
            origins: Where the header may go, as ``scheme://host[:port]``; an adapter or tool
                sends it only to a URL whose origin equals one exactly. Default: nowhere.
            tracestate: The host's ``tracestate`` to send with it.
            children: Which child processes get ``TRACEPARENT``: ``"tools"`` (a tool body's
                subprocesses), ``"hooks"`` (command hooks), both, or none (the default). A
                separate grant from ``origins`` (S27): granting origins gives children nothing.

        Raises:
            ConfigurationError: a malformed traceparent (wrong shape, version ``ff``, an all-zero
                trace or span id), origin, tracestate or child class.
        """
        text: object = traceparent
        match = _TRACEPARENT.match(text.strip().lower()) if isinstance(text, str) else None
        if match is None:
            raise ConfigurationError(
                "traceparent must be '00-<32 hex trace id>-<16 hex span id>-<2 hex flags>', "
                f"got {traceparent!r}"
            )
        version, trace_id, span_id, flags, rest = match.groups()
        if version == "ff" or (version == "00" and rest):
            raise ConfigurationError(f"traceparent version {version!r} is not valid here")
        if trace_id == "0" * 32 or span_id == "0" * 16:
            raise ConfigurationError("traceparent has an all-zero trace id or span id (invalid)")
        listed: object = origins
        if isinstance(listed, str) or not isinstance(listed, Iterable):
            raise ConfigurationError(
                f"origins must be a list of origins (or empty), got {origins!r}"
            )
        granted: object = children
        if isinstance(granted, str) or not isinstance(granted, Iterable):
            raise ConfigurationError(
                f"children must be a list of {' and/or '.join(_CHILD_CLASSES)} (or empty), "
                f"got {children!r}"
            )
        grants: set[ChildTraceClass] = set()
        for item in granted:
            if item not in _CHILD_CLASSES:
                raise ConfigurationError(
                    f"children must name {' or '.join(_CHILD_CLASSES)}, got {item!r}"
                )
            grants.add(item)
        return cls(
            trace_id=trace_id,
            parent_span_id=span_id,
            trace_flags=int(flags, 16),
            tracestate=tracestate,
            origins=tuple(dict.fromkeys(_check_origin(o) for o in listed)),
            children=frozenset(grants),
        )

    @property
    def traceparent(self) -> str:
        """The host's own traceparent, normalised."""
        return self.traceparent_for(self.parent_span_id)

    def traceparent_for(self, span_id: str) -> str:
        """The traceparent naming ``span_id`` in this trace."""
        return f"00-{self.trace_id}-{span_id}-{self.trace_flags:02x}"

    def allows(self, url: str) -> bool:
        """Whether ``url``'s origin exactly equals a listed origin."""
        origin = origin_of(url)
        return origin is not None and origin in self.origins

    def __repr__(self) -> str:
        return f"TraceContext({self.traceparent!r}, origins={list(self.origins)!r})"


@final
@dataclass(frozen=True, slots=True)
class ProviderTrace:
    """What a provider call is handed (S27): its traceparent and where it may be sent.

    The runtime resolves it at invocation, after the request was announced, and sets it on the
    :class:`~robota.core.providers.ChatRequest` it hands to a provider that declares propagation
    (:meth:`~robota.Provider.propagates_trace_context`); no event contains it.

    Attributes:
        traceparent: Names this provider call's span.
        tracestate: The host's tracestate, or ``None``.
        origins: The host-listed origins.
    """

    traceparent: str
    tracestate: str | None
    origins: tuple[str, ...]

    def headers_for(self, url: str | None) -> dict[str, str]:
        """The trace headers for a request to ``url``: none unless its origin is listed."""
        if url is None:
            return {}
        origin = origin_of(url)
        if origin is None or origin not in self.origins:
            return {}
        headers = {"traceparent": self.traceparent}
        if self.tracestate:
            headers["tracestate"] = self.tracestate
        return headers


def body_span_key(attempt: str | None, call_id: str) -> str:
    """The id a tool body's span derives from (S27): its own minted ``call_id``.

    In a continuation (``attempt`` set, S40) a body that runs again keeps its logical call id —
    a tool's idempotency key — yet is a new span, so the key is qualified by the attempt.
    """
    return call_id if attempt is None else f"{attempt}/{call_id}"


def check_trace(value: object) -> TraceContext | None:
    """``value`` as a run's trace context (``None`` allowed), or a clear error."""
    if value is None or isinstance(value, TraceContext):
        return value
    raise ConfigurationError(
        "trace must be a robota.TraceContext (TraceContext.from_traceparent(...)) or None, "
        f"got {type(value).__name__}"
    )


def child_environment(
    base: Mapping[str, str],
    traceparent: str | None,
    tracestate: str | None = None,
    *,
    configured: Mapping[str, str] | None = None,
    strip: bool = False,
) -> dict[str, str]:
    """A fresh environment for a child process (S27), never the object passed in.

    With a ``traceparent``: ``base`` without its ambient ``TRACEPARENT`` and ``TRACESTATE`` (they
    belong to another parent), then ``traceparent`` and the host's ``tracestate`` set. Without
    one: a copy of ``base`` — with both removed when ``strip``, which is what the runtime passes
    for a child the host did not grant, traced run or not (see the module docstring); without
    ``strip`` the copy keeps them, for a caller whose ``base`` holds no ambient trace. Either
    way, what ``configured`` — the child's own configuration — sets wins.
    """
    env = dict(base)
    if traceparent is not None:
        env.pop("TRACESTATE", None)
        env["TRACEPARENT"] = traceparent
        if tracestate:
            env["TRACESTATE"] = tracestate
    elif strip:
        env.pop("TRACEPARENT", None)
        env.pop("TRACESTATE", None)
    if configured:
        env.update(configured)
    return env


@final
@dataclass(frozen=True, slots=True)
class RunTrace:
    """One run's trace (internal): the host's context and the id the run's span derives from."""

    context: TraceContext
    span_key: str

    @property
    def span_id(self) -> str:
        """The run's span (the prompt root)."""
        return derive_span_id(self.span_key)

    def traceparent_for_key(self, key: str) -> str:
        """The traceparent naming the span derived from ``key`` (a provider call, a tool body)."""
        return self.context.traceparent_for(derive_span_id(key))

    def handed(self, key: str) -> ProviderTrace:
        """What a call whose span derives from ``key`` is handed: its traceparent, the grants."""
        context = self.context
        return ProviderTrace(self.traceparent_for_key(key), context.tracestate, context.origins)

    @property
    def hook_traceparent(self) -> str | None:
        """What command hooks receive (S27: the prompt root), when the host granted hooks."""
        if "hooks" not in self.context.children:
            return None
        return self.context.traceparent_for(self.span_id)

    def event_data(self) -> dict[str, object]:
        """The host-supplied identifiers, for the run's start event (never a call's traceparent)."""
        return {
            "trace_id": self.context.trace_id,
            "parent_span_id": self.context.parent_span_id,
            "trace_flags": self.context.trace_flags,
        }
