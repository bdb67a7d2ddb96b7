"""Adapter options checked the same way everywhere: constructors, stop lists, ``extra`` (S28).

Also :func:`register_model_table`, which registers a vendor's model table (S04, S13).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeAlias
from urllib.parse import urlsplit

from robota.core import (
    ConfigurationError,
    register_model_metadata,
    register_model_pricing,
)
from robota.core.providers import (
    ChatRequest,
)


def check_stop_count(request: ChatRequest, limit: int | None, *, api: str) -> None:
    """Refuse, before any transport, more stop sequences than the vendor takes (S28).

    Refused rather than shortened: a stop list cut to the limit ends the output somewhere the
    caller did not ask for. ``limit`` ``None``: the vendor states none.

    Raises:
        ConfigurationError: naming the limit, the API, the model and the fix.
    """
    stop = request.settings.stop
    if limit is None or stop is None or len(stop) <= limit:
        return
    raise ConfigurationError(
        f"{api} takes at most {limit} stop sequences, but ModelSettings.stop has {len(stop)} "
        f"for model {request.model!r}; nothing was sent. Pass at most {limit} (robota does not "
        "shorten the list: a dropped sequence would let the output run past it)",
        code="stop_limit",
    )


ExtraReserved: TypeAlias = Mapping[str, str | None]
"""Request-body fields an adapter sets itself, each with what to use instead of ``extra``:
``"ModelSettings(temperature=...)"``, ``"the run's effort="`` … or ``None`` for a field built
from the run (messages, tools) that nothing overrides."""


USE_EFFORT: Final = "the agent's or the run's effort="
USE_OUTPUT: Final = "the run's output= (structured output)"


def use_setting(name: str) -> str:
    """What to use instead of an ``extra`` field :class:`~robota.ModelSettings` has."""
    return f"ModelSettings({name}=...)"


def extra_collision(
    key: str, instead: str | None, *, request: ChatRequest, provider: str, api: str
) -> ConfigurationError:
    """The error for an ``extra`` field that collides with one the adapter sets (S28)."""
    fix = (
        f"use {instead} instead"
        if instead is not None
        else f"{key!r} is built from the run and cannot be overridden through extra"
    )
    return ConfigurationError(
        f"ModelSettings.extra[{provider!r}] sets {key!r}, a field the {api} adapter sets "
        f"itself, for model {request.model!r}; nothing was sent. Leave it out of extra: {fix}",
        code="extra_collision",
    )


def with_extra_fields(
    params: dict[str, Any],
    request: ChatRequest,
    provider: str,
    *,
    reserved: ExtraReserved,
    api: str,
) -> None:
    """Add ``request.settings.extra[provider]`` to the request body ``params`` (S28).

    One rule for every adapter: an extra field the adapter sets itself — one of ``reserved``
    (whether or not this request sets it) or one ``params`` already has — is refused, never
    skipped and never merged over it.

    Raises:
        ConfigurationError: before any transport, naming the field and what to use instead.
    """
    extra = request.settings.extra_for(provider)
    for key in extra:
        if key in reserved or key in params:
            raise extra_collision(
                key, reserved.get(key), request=request, provider=provider, api=api
            )
    params.update(extra)


_registered_tables: set[tuple[int, str]] = set()


def register_model_table(
    provider: str,
    rows: Mapping[str, tuple[int, int | None, float, float, float | None]],
) -> None:
    """Register a vendor table's metadata (S13) and prices (S04) under ``provider``.

    ``rows`` maps each model name (aliases included) to ``(context_window, max_output_tokens,
    input_per_million, output_per_million, cache_read_per_million)``. Idempotent per table and
    provider name, so an adapter can call it from its constructor.
    """
    key = (id(rows), provider)
    if key in _registered_tables:
        return
    for name, (window, max_output, input_price, output_price, cache_price) in rows.items():
        register_model_metadata(
            name, context_window=window, max_output_tokens=max_output, provider=provider
        )
        register_model_pricing(
            name,
            input_per_million=input_price,
            output_per_million=output_price,
            cache_read_per_million=cache_price,
            provider=provider,
        )
    _registered_tables.add(key)


def check_adapter_options(
    name: object, native_tools: Iterable[str], supported: Iterable[str], *, where: str
) -> frozenset[str]:
    """The checks every adapter's constructor makes; returns the enabled hosted tools (S30).

    Raises:
        ConfigurationError: for an empty or non-string ``name``, or a hosted tool ``where``
            (the adapter, or the API it speaks) does not support.
    """
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"name must be a non-empty string, got {name!r}")
    native = frozenset(native_tools)
    allowed = frozenset(supported)
    unsupported = native - allowed
    if unsupported:
        raise ConfigurationError(
            f"native tool(s) {sorted(unsupported)} are not supported by {where}; "
            f"supported: {', '.join(sorted(allowed)) or 'none'}"
        )
    return native


def check_base_url(base_url: object, *, where: str) -> None:
    """Refuse a ``base_url`` that is not an ``http(s)://host…`` URL, when the adapter is built.

    Otherwise a typo surfaces at the first run as "could not be reached", or a non-string as the
    HTTP client's ``TypeError``. ``None`` (not given) passes.

    Raises:
        ConfigurationError: naming ``where`` and how to write the URL.
    """
    if base_url is None:
        return
    example = "e.g. base_url='https://gateway.example/v1'"
    if not isinstance(base_url, str):
        raise ConfigurationError(
            f"{where} base_url must be a string URL with http:// or https:// ({example}), got "
            f"{type(base_url).__name__}"
        )
    try:
        parts = urlsplit(base_url.strip())
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid:
        raise ConfigurationError(
            f"{where} base_url {base_url!r} is not a URL: write the API root with http:// or "
            f"https://, {example}"
        )


def given(**options: Any) -> dict[str, Any]:
    """The options that were given (not ``None``), for an SDK client's constructor."""
    return {key: value for key, value in options.items() if value is not None}
