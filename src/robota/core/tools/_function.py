"""``@tool`` / :class:`FunctionTool`: a tool from a plain Python function.

The parameter schema comes from the function's type hints (pydantic types and models included)
and the per-parameter descriptions from its docstring (Google ``Args:`` or Sphinx ``:param:``
style); the tool description is the docstring's first paragraph. A parameter annotated
:class:`~robota.ToolContext` is injected and never shown to the model.

Arguments are judged by the one validator (S16) against the emitted schema, then converted by
pydantic into the annotated Python types (nested models become model instances). Synchronous
functions run in a worker thread by default so they cannot block the event loop; pass
``thread=False`` for quick, non-blocking ones. The worker is a daemon thread of the call's own,
not the event loop's executor: a run that stopped waiting for the call
(:meth:`~robota.AbortController.abandon`) and then the process can end while it still runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import math
import re
import sys
import threading
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final, final, overload

import pydantic

from robota.core._errors import ConfigurationError, SchemaValidationError
from robota.core.schema._convert import schema_from_type
from robota.core.schema._validate import pydantic_issues
from robota.core.tools._tool import (
    PermissionArgument,
    RiskClass,
    Tool,
    ToolContext,
    ToolOutput,
)

__all__ = ["FunctionTool", "tool"]

_PLAIN: Final = frozenset({str, int, float, bool})

_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?)\s*:\s*$"
)
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:\S+\s+)?(\w+)\s*:\s*(.*)$")
_ENTRY = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The first paragraph, and parameter descriptions by name."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line) or _SPHINX_PARAM.match(line):
            break
        summary.append(line.strip())
    params: dict[str, str] = {}
    in_args = False
    entry_indent: int | None = None
    current: str | None = None
    for line in lines:
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx:
            current = sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            continue
        section = _SECTION.match(line)
        if section:
            in_args = section.group(1) in ("Args", "Arguments", "Parameters")
            entry_indent = current = None
            continue
        if not in_args or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        entry = _ENTRY.match(line)
        if entry and (entry_indent is None or indent <= entry_indent):
            entry_indent = indent
            current = entry.group(1)
            params[current] = entry.group(2).strip()
        elif current is not None and entry_indent is not None and indent > entry_indent:
            params[current] = f"{params[current]} {line.strip()}".strip()
        else:
            in_args = False
    return " ".join(summary), params


def _is_context(annotation: object) -> bool:
    if annotation is ToolContext:
        return True
    return any(arg is ToolContext for arg in typing.get_args(annotation))


@final
class FunctionTool(Tool):
    """A :class:`~robota.Tool` built from a function; see :func:`robota.tool`.

    Calling the instance calls the original function, so a decorated function stays usable.
    ``namespace`` resolves annotations that name local types (``@tool`` passes the caller's
    locals, so a model class defined in the same function works).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        risk: RiskClass | None = None,
        argument: PermissionArgument | None = None,
        thread: bool = True,
        source: str | None = None,
        defer: bool = False,
        idempotent: bool = False,
        namespace: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise ConfigurationError(
                f"@tool needs a function (robota.tool(my_function), or @robota.tool above a def), "
                f"got {type(fn).__name__} {fn!r}"
            )
        self._fn = fn
        self._is_async = inspect.iscoroutinefunction(fn)
        self._thread = thread
        tool_name = name or getattr(fn, "__name__", None)
        summary, param_docs = _parse_docstring(inspect.getdoc(fn))
        try:
            hints = typing.get_type_hints(
                fn, localns=dict(namespace) if namespace else None, include_extras=True
            )
        except Exception as exc:
            raise ConfigurationError(
                f"tool {tool_name!r}: cannot resolve the type hints ({exc}); define the types "
                "the annotations name before decorating"
            ) from exc
        self._context_param: str | None = None
        self._params: list[str] = []
        fields: dict[str, Any] = {}
        plain: dict[str, tuple[Any, Any]] = {}
        for param in inspect.signature(fn).parameters.values():
            annotation = hints.get(param.name, inspect.Parameter.empty)
            if annotation is not inspect.Parameter.empty and _is_context(annotation):
                self._context_param = param.name
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ConfigurationError(
                    f"tool {tool_name!r}: *args/**kwargs cannot be described to a model; declare "
                    "each parameter by name"
                )
            if param.kind is param.POSITIONAL_ONLY:
                raise ConfigurationError(
                    f"tool {tool_name!r}: positional-only parameter {param.name!r} cannot be "
                    "passed by name; remove the '/'"
                )
            if annotation is inspect.Parameter.empty:
                raise ConfigurationError(
                    f"tool {tool_name!r}: parameter {param.name!r} has no type annotation; the "
                    f"model needs a type to call it (e.g. `{param.name}: str`)"
                )
            default = ... if param.default is inspect.Parameter.empty else param.default
            if annotation in _PLAIN:
                plain[param.name] = (annotation, default)
            fields[param.name] = (
                annotation,
                pydantic.Field(default, description=param_docs.get(param.name)),
            )
            self._params.append(param.name)
        # Every parameter a plain str/int/float/bool: the one validator's verdict (S16) already
        # fixes each value's type, so pydantic would only copy it; skip it (the hot path).
        self._plain = plain if len(plain) == len(self._params) else None
        try:
            self._model: type[pydantic.BaseModel] = pydantic.create_model(
                f"{tool_name}_arguments",
                __config__=pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=False),
                **fields,
            )
            schema = schema_from_type(self._model)
        except ConfigurationError:
            raise
        except Exception as exc:
            raise ConfigurationError(
                f"tool {tool_name!r}: its parameter types cannot be described as a schema: {exc}"
            ) from exc
        super().__init__(
            tool_name,
            description if description is not None else summary,
            schema,
            risk=risk,
            permission_argument=argument,
            source=source,
            defer=defer,
            idempotent=idempotent,
        )
        functools.update_wrapper(self, fn)

    @property
    def function(self) -> Callable[..., Any]:
        """The wrapped function."""
        return self._fn

    def validate_arguments(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """Judge with the one validator (S16), then convert to the annotated types."""
        plain = self._plain
        if plain is not None:
            fast = _plain_values(plain, arguments)
            if fast is not None:
                return fast  # exactly what the one validator (S16) and pydantic would give
        checked = super().validate_arguments(arguments)
        try:
            instance = self._model.model_validate(dict(checked))
        except pydantic.ValidationError as exc:
            issues = pydantic_issues(exc)
            raise SchemaValidationError(
                f"invalid arguments for tool {self.name!r}: " + "; ".join(issues), issues=issues
            ) from None
        return {name: getattr(instance, name) for name in self._params}

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Call the function with ``args`` (and the context, if it asks for one)."""
        kwargs = dict(args)
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        output: object
        if self._is_async:
            output = await self._fn(**kwargs)
        elif self._thread:
            output = await _in_daemon_thread(self._fn, kwargs, self.name)
        else:
            output = self._fn(**kwargs)
        return output

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the original function directly."""
        return self._fn(*args, **kwargs)


async def _in_daemon_thread(fn: Callable[..., Any], kwargs: dict[str, Any], name: str) -> Any:
    """``fn(**kwargs)`` in a daemon thread, awaited; the context is copied as ``to_thread`` does.

    Not the loop's default executor: ``asyncio.run`` and interpreter exit join its threads, so a
    body the run stopped waiting for would still hold the process until it returned.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if future.done():
            return  # the waiter was cancelled: the result is discarded
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        try:
            outcome: tuple[bool, Any] = (True, context.run(fn, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task, which raises it
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed while the body ran
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name=f"robota-tool-{name}", daemon=True).start()
    return await future


def _plain_values(
    plain: Mapping[str, tuple[Any, Any]], arguments: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The body's arguments when they are plainly valid (the hot path), else ``None``.

    Accepts only what the full validator accepts for the schema a plain signature produces —
    exact ``str``/``bool``/``int``, finite ``float`` (or ``int``) for ``float``, every required
    parameter present, no other key — so any doubt, and every refusal with its issues, takes
    the full path.
    """
    checked: object = arguments
    if not isinstance(checked, dict):
        return None
    for key in checked:
        if key not in plain:
            return None
    values: dict[str, Any] = {}
    for name, (kind, default) in plain.items():
        if name not in checked:
            if default is ...:
                return None
            values[name] = default
            continue
        value = checked[name]
        given = type(value)
        if kind is float:
            if given is int:
                try:
                    value = float(value)
                except OverflowError:
                    return None  # beyond a float: the full path refuses it with its issue
            elif given is not float or not math.isfinite(value):
                return None
        elif given is not kind:
            return None
        values[name] = value
    return values


@overload
def tool(
    fn: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    risk: RiskClass | None = None,
    argument: PermissionArgument | None = None,
    thread: bool = True,
    source: str | None = None,
    defer: bool = False,
    idempotent: bool = False,
) -> FunctionTool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    risk: RiskClass | None = None,
    argument: PermissionArgument | None = None,
    thread: bool = True,
    source: str | None = None,
    defer: bool = False,
    idempotent: bool = False,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    risk: RiskClass | None = None,
    argument: PermissionArgument | None = None,
    thread: bool = True,
    source: str | None = None,
    defer: bool = False,
    idempotent: bool = False,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool from a function, sync or async.

    Use bare (``@tool``), with options (``@tool(name="search", risk="inspect")``), or as a call
    (``robota.tool(fn, defer=True)``)::

        @robota.tool
        async def get_weather(city: str, ctx: robota.ToolContext) -> str:
            \"\"\"Current weather for a city.

    Args:
                city: The city name, e.g. "Paris".
            \"\"\"
            ...

    Args:
        fn: The function (when used bare).
        name: The tool name; default: the function's name.
        description: What the model reads; default: the docstring's first paragraph.
        risk: The declared :data:`~robota.RiskClass` (S21).
        argument: The :class:`~robota.PermissionArgument` permission patterns are scoped to.
        thread: Run a synchronous function in a worker thread (default) rather than on the
            event loop.
        source: Who provides the tool, as the host declares it (kept on every record, S39).
        defer: Make the tool deferred (S19): once the agent's ``tool_deferral`` engages, its
            schema is withheld from requests until the built-in ``tool_search`` loads it.
        idempotent: Running the body twice for one call is harmless (see
            :attr:`robota.Tool.idempotent`): an engine's retry of an unsettled attempt runs it
            again instead of asking for reconciliation.

    Raises:
        ConfigurationError: when a parameter cannot be described to a model (no annotation,
            ``*args``, a recursive type, a fixed-length tuple …); the message says what to write.
    """

    def build(function: Callable[..., Any], namespace: Mapping[str, Any]) -> FunctionTool:
        return FunctionTool(
            function,
            name=name,
            description=description,
            risk=risk,
            argument=argument,
            thread=thread,
            source=source,
            defer=defer,
            idempotent=idempotent,
            namespace=namespace,
        )

    if fn is not None:
        return build(fn, sys._getframe(1).f_locals)

    def decorate(function: Callable[..., Any]) -> FunctionTool:
        return build(function, sys._getframe(1).f_locals)

    return decorate
