"""Model settings (S28, S30): the sampling and request controls a caller sets on a model call.

:class:`ModelSettings` is set on the agent (``Agent(settings=...)``) and per run
(``agent.run(..., settings=...)``); :meth:`ModelSettings.merged` lays the run's over the agent's
field by field. The runtime hands the merged value to the provider on
:attr:`~robota.core.providers.ChatRequest.settings`; core never reads the values beyond that.

Each adapter maps every field its vendor API has and states in its capability table
(:attr:`~robota.ModelCapabilities.settings`) which fields a model honours. A field that is set but
not honoured is not sent, and the run says so (an ``execution.setting_unsupported`` event naming
the field and the model) rather than dropping it silently.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final, final

from robota.core._errors import ConfigurationError

__all__ = [
    "NO_SETTINGS",
    "SETTING_NAMES",
    "ModelSettings",
    "check_settings",
    "settings_from_data",
    "settings_to_data",
]


def _number(value: object, name: str, low: float, high: float, hint: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigurationError(
            f"ModelSettings.{name} must be a number or None, got {type(value).__name__} "
            f"{value!r}; {hint}"
        )
    number = float(value)
    if math.isnan(number) or not low <= number <= high:
        raise ConfigurationError(f"ModelSettings.{name} is {value!r}; {hint}")
    return number


def _positive_int(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigurationError(
            f"ModelSettings.{name} must be a positive integer (a number of tokens) or None, "
            f"got {value!r}"
        )
    return value


def _stop(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    items: Sequence[object] = (value,) if isinstance(value, str) else value  # type: ignore[assignment]
    if not isinstance(items, (list, tuple)):
        raise ConfigurationError(
            f"ModelSettings.stop must be a string or a list of strings, got {value!r}"
        )
    if not items or not all(isinstance(item, str) and item for item in items):
        raise ConfigurationError(
            f"ModelSettings.stop must hold non-empty strings, got {value!r}; pass None for "
            "no stop sequence"
        )
    return tuple(str(item) for item in items)


def _json_value(value: object, where: str) -> object:
    """``value`` as a fresh JSON value (tuples become lists), else a ConfigurationError."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
        return {key: _json_value(item, f"{where}[{key!r}]") for key, item in value.items()}
    raise ConfigurationError(
        f"{where} is {type(value).__name__} {value!r}, not a JSON value; extra holds request-body "
        "fields, so use strings, numbers (finite), booleans, None, and lists and string-keyed "
        "mappings of them"
    )


@final
class _ReadOnlyMapping(Mapping[str, Any]):
    """An immutable mapping that copies, pickles and prints like the dict it holds."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return repr(self._data)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_ReadOnlyMapping, (self._data,))

    def __copy__(self) -> _ReadOnlyMapping:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> _ReadOnlyMapping:
        return _ReadOnlyMapping(copy.deepcopy(self._data, memo))


def _extra(value: object) -> Mapping[str, Mapping[str, object]] | None:
    if value is None:
        return None
    fix = (
        "key it by provider name, e.g. extra={'openai': {'service_tier': 'flex'}} "
        "(each inner mapping holds request-body fields for that provider)"
    )
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"ModelSettings.extra must be a mapping, got {value!r}; {fix}")
    frozen: dict[str, Mapping[str, object]] = {}
    for provider, body in value.items():
        if not isinstance(provider, str) or not isinstance(body, Mapping):
            raise ConfigurationError(
                f"ModelSettings.extra[{provider!r}] must be a mapping of request fields; {fix}"
            )
        if not all(isinstance(key, str) for key in body):
            raise ConfigurationError(
                f"ModelSettings.extra[{provider!r}] has a non-string field name; {fix}"
            )
        # A copy of JSON values only: the journal and Temporal store settings as JSON (S40),
        # and the caller's nested lists and dicts cannot change the settings afterwards.
        where = f"ModelSettings.extra[{provider!r}]"
        frozen[provider] = _ReadOnlyMapping(
            {key: _json_value(item, f"{where}[{key!r}]") for key, item in body.items()}
        )
    return _ReadOnlyMapping(frozen)


@final
@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Sampling and request controls for model calls; every field ``None`` means "not set".

    Immutable and validated at construction (a bad value raises
    :class:`~robota.ConfigurationError` naming the fix). Set on the agent and per run; a run's
    set fields override the agent's (:meth:`merged`). A field the model cannot honour is not
    sent and is reported (event ``execution.setting_unsupported``, and absent from
    :attr:`~robota.ModelCapabilities.settings`).

    Example::

        agent = robota.Agent("openai:gpt-4o-mini", settings=robota.ModelSettings(temperature=0))
        await agent.run("hi", settings=robota.ModelSettings(max_output_tokens=200))
    """

    temperature: float | None = None
    """Sampling temperature, 0 to 2 (Anthropic accepts 0 to 1). Lower is more deterministic."""

    top_p: float | None = None
    """Nucleus sampling: only tokens within this cumulative probability, 0 to 1."""

    max_output_tokens: int | None = None
    """Upper bound on the tokens of one response (reasoning tokens included where the vendor
    counts them). A reply cut by it ends with the vendor's length finish reason."""

    stop: tuple[str, ...] | None = None
    """Stop sequences: generation ends before any of them. A single string is accepted and
    stored as a one-element tuple. A vendor limit is enforced by its adapter before sending —
    OpenAI Chat Completions takes 4, Gemini 5 — with a ConfigurationError, never by shortening
    the list (the Responses API has no stop at all: reported, not sent)."""

    seed: int | None = None
    """A sampling seed, for best-effort reproducible output where the vendor offers one."""

    presence_penalty: float | None = None
    """Penalty (-2 to 2) for tokens that already appeared at all; positive favours new topics."""

    frequency_penalty: float | None = None
    """Penalty (-2 to 2) growing with how often a token appeared; positive reduces repetition."""

    parallel_tool_calls: bool | None = None
    """Whether the model may ask for several tool calls in one response (``False`` asks for at
    most one). Only sent on a request that offers tools."""

    timeout: float | None = None
    """Seconds to wait for one model call, passed to the vendor SDK as its per-request timeout.
    Not a run deadline: abort a run with its ``signal``."""

    extra: Mapping[str, Mapping[str, object]] | None = None
    """Vendor-specific request fields, keyed by provider name (``Provider.name``: ``"openai"``,
    ``"anthropic"``, ``"gemini"``, ``"openai-compatible"`` or your own). The adapter of that
    name merges its mapping into the JSON request body as sent (the SDK's ``extra_body``), so a
    field the SDK does not know yet reaches the wire; other adapters ignore it, and core never
    reads it. Example: ``{"openai": {"service_tier": "flex"}}``. A field the adapter sets itself
    (``temperature``, ``messages``, Gemini's ``contents`` …) is refused before sending with a
    ConfigurationError naming the field to use instead: ``extra`` adds fields, never overrides.
    The values must be JSON (the journal stores them with a durable run): they are copied when
    the settings are built, a tuple becoming a list, and anything else (a date, ``nan``, bytes)
    is refused naming its field."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(
            self,
            "temperature",
            _number(self.temperature, "temperature", 0.0, 2.0, "use a value from 0 to 2"),
        )
        set_(self, "top_p", _number(self.top_p, "top_p", 0.0, 1.0, "use a value from 0 to 1"))
        set_(
            self,
            "max_output_tokens",
            _positive_int(self.max_output_tokens, "max_output_tokens"),
        )
        set_(self, "stop", _stop(self.stop))
        seed = self.seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ConfigurationError(f"ModelSettings.seed must be an integer, got {self.seed!r}")
        for name in ("presence_penalty", "frequency_penalty"):
            set_(self, name, _number(getattr(self, name), name, -2.0, 2.0, "use -2 to 2"))
        if self.parallel_tool_calls is not None and not isinstance(self.parallel_tool_calls, bool):
            raise ConfigurationError(
                "ModelSettings.parallel_tool_calls must be True, False or None, "
                f"got {self.parallel_tool_calls!r}"
            )
        timeout = _number(self.timeout, "timeout", 0.0, math.inf, "use a positive number")
        if timeout is not None and (timeout == 0.0 or math.isinf(timeout)):
            raise ConfigurationError(
                f"ModelSettings.timeout is {self.timeout!r}; use a positive number (a finite "
                "number of seconds), or None for the SDK's default"
            )
        set_(self, "timeout", timeout)
        set_(self, "extra", _extra(self.extra))

    def __hash__(self) -> int:
        # ``extra`` holds JSON values (lists, dicts), which do not hash; its provider names
        # do, and equal settings have equal ones, so the hash agrees with ``==``.
        extra = None if self.extra is None else frozenset(self.extra)
        return hash((*(getattr(self, name) for name in SETTING_NAMES[:-1]), extra))

    def merged(self, over: ModelSettings | None) -> ModelSettings:
        """These settings with ``over``'s set fields laid on top, field by field.

        ``extra`` merges per provider name: ``over``'s mapping for a provider replaces this
        one's for that provider; other providers' entries are kept.
        """
        if over is None or over is NO_SETTINGS:
            return self
        if not isinstance(over, ModelSettings):
            raise ConfigurationError(
                f"settings must be a robota.ModelSettings, got {type(over).__name__}"
            )
        values = {
            name: getattr(over, name) if getattr(over, name) is not None else getattr(self, name)
            for name in SETTING_NAMES
        }
        if self.extra is not None and over.extra is not None:
            values["extra"] = {**self.extra, **over.extra}
        return ModelSettings(**values)

    def set_fields(self) -> tuple[str, ...]:
        """The names of the fields that are set (not ``None``), in declaration order."""
        return tuple(name for name in SETTING_NAMES if getattr(self, name) is not None)

    def extra_for(self, provider: str) -> Mapping[str, object]:
        """The request-body fields ``extra`` holds for the provider named ``provider``."""
        if self.extra is None:
            return {}
        return self.extra.get(provider, {})


SETTING_NAMES: Final = tuple(f.name for f in fields(ModelSettings))
"""Every :class:`ModelSettings` field name, in declaration order."""

NO_SETTINGS: Final = ModelSettings()
"""Nothing set: the default everywhere, so the runtime can tell "none" by identity, for free."""


def check_settings(value: object, where: str) -> ModelSettings:
    """``value`` as settings (``None``: :data:`NO_SETTINGS`), else a ConfigurationError."""
    if value is None:
        return NO_SETTINGS
    if isinstance(value, ModelSettings):
        return value
    raise ConfigurationError(
        f"{where} must be a robota.ModelSettings (e.g. ModelSettings(temperature=0.2)), "
        f"got {type(value).__name__}"
    )


def settings_to_data(settings: ModelSettings) -> dict[str, Any]:
    """The set fields of ``settings`` as plain JSON values (journal and Temporal payloads)."""
    data: dict[str, Any] = {}
    for name in settings.set_fields():
        value = getattr(settings, name)
        if name == "stop":
            value = list(value)
        elif name == "extra":
            value = {provider: dict(body) for provider, body in value.items()}
        data[name] = value
    return data


def settings_from_data(data: object) -> ModelSettings:
    """The settings :func:`settings_to_data` wrote; an empty or absent payload: none set."""
    if not data:
        return NO_SETTINGS
    if not isinstance(data, Mapping):
        raise TypeError(f"model settings must be an object, got {data!r}")
    body = dict(data)
    unknown = set(body) - set(SETTING_NAMES)
    if unknown:
        raise TypeError(f"unknown model settings {sorted(unknown)}")
    if "stop" in body:
        body["stop"] = tuple(body["stop"])
    return ModelSettings(**body)
