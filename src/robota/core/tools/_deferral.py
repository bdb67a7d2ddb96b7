"""Tool deferral (S19): resident and deferred schemas, and the built-in ``tool_search``.

Each tool is resident (always offered, the default) or deferred. Once deferral is *engaged* —
``tool_deferral="on"``, or ``"auto"`` past a threshold — a deferred tool's schema is withheld from
the outbound request entirely until the model loads it with ``tool_search``, an ordinary function
tool over the catalog this module owns. So the bytes sent and the context tokens both fall, the
same way on every provider, native deferral or not. A tool that search returned is offered from
the next round on: the offered list is read fresh every round.

Two invariants are refused, never repaired (both raise :class:`~robota.ConfigurationError` when
the agent is built):

- at least one registered tool stays resident — deferring everything offers the model nothing
  of its own to call;
- whenever a schema is withheld, ``tool_search`` is offered — a deferred tool with no loader is
  unreachable.

Residency never widens authority: the permission gate decides by name only and never reads it,
a tool denied outright is neither offered nor found by search, and a deferred tool can be invoked
directly (S43) whether loaded or not.

Which tools are loaded is read from the conversation itself — the ``tool_search`` results in
history — so a restored or resumed conversation (S40) offers what its model had loaded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, Protocol, TypeAlias, final

from robota.core._errors import ConfigurationError
from robota.core._messages import Message, ToolMessage
from robota.core._texts import ModelTexts, render
from robota.core.providers._contract import ToolSpec
from robota.core.tools._registry import ToolRegistry
from robota.core.tools._tool import Tool, ToolContext, ToolOutput, ToolResidency

__all__ = [
    "AUTO_DEFERRAL_SCHEMA_SHARE",
    "AUTO_DEFERRAL_TOOL_COUNT",
    "TOOL_SEARCH_NAME",
    "ToolCatalog",
    "ToolDeferral",
    "ToolSearchTool",
    "estimate_schema_tokens",
]

ToolDeferral: TypeAlias = Literal["auto", "on", "off"]
"""An agent's deferral setting (S19): ``"on"`` always withholds deferred tools, ``"off"`` never
does, ``"auto"`` (default) engages past :data:`AUTO_DEFERRAL_TOOL_COUNT` deferred tools or when
their estimated schema tokens reach :data:`AUTO_DEFERRAL_SCHEMA_SHARE` of the context window."""

TOOL_SEARCH_NAME: Final = "tool_search"
"""The built-in search tool's name."""

AUTO_DEFERRAL_TOOL_COUNT: Final = 30
"""``tool_deferral="auto"`` engages once this many tools are deferred."""

AUTO_DEFERRAL_SCHEMA_SHARE: Final = 0.10
"""…or once the deferred tools' estimated schema tokens reach this share of the model's window."""

_SETTINGS: Final = ("auto", "on", "off")
_CHARS_PER_TOKEN: Final = 4
_DEFAULT_RESULTS: Final = 5
_MAX_RESULTS: Final = 20
_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def estimate_schema_tokens(spec: ToolSpec) -> int:
    """A rough token count of one tool's schema as a request carries it (~4 characters each)."""
    text = json.dumps(
        {"name": spec.name, "description": spec.description, "parameters": spec.parameters},
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return len(text) // _CHARS_PER_TOKEN + 1


def _words(text: str) -> set[str]:
    return set(_WORD.findall(_CAMEL.sub(" ", text).lower()))


def check_deferral(value: object) -> ToolDeferral:
    """``value`` as a :data:`ToolDeferral`, or a clear error."""
    if value == "auto":
        return "auto"
    if value == "on":
        return "on"
    if value == "off":
        return "off"
    raise ConfigurationError(f"tool_deferral must be one of {_SETTINGS}, got {value!r}")


@final
class _Plan:
    """What deferral does for one catalog and one context window."""

    __slots__ = ("deferred", "engaged", "visible")

    def __init__(
        self, engaged: bool, deferred: tuple[Tool, ...], visible: tuple[ToolSpec, ...]
    ) -> None:
        self.engaged = engaged
        self.deferred = deferred
        self.visible = visible


class WindowOwner(Protocol):
    """What a catalog reads its default context window from (the agent; no bound method kept)."""

    def _context_window(self) -> int | None: ...


class Withholder(Protocol):
    """What a catalog asks whether the permission gate withholds a tool (the executor)."""

    def _withheld(self, tool: Tool) -> bool: ...


# Never written: every catalog's load order until its first load (issue 27).
_NONE_LOADED: Final[dict[str, None]] = {}

# No tools, nothing to defer: one shared plan, no per-agent cache (issue 27).
_NO_TOOLS = _Plan(False, (), ())


@final
class ToolCatalog:
    """An agent's tools as deferral sees them: residency, what is loaded, what is offered.

    Args:
        registry: The agent's registered tools (``tool_search`` is never among them).
        setting: The agent's :data:`ToolDeferral`.
        search: Whether the built-in ``tool_search`` exists; without it, engaged deferral that
            withholds something is refused.
        window: The agent's model's context window in tokens, read only when ``"auto"`` must
            decide on the schema-token share (``None``: unknown, which weighs nothing); a run
            passes its own model's instead.
        texts: The built-in ``tool_search``'s description and notes (S35).

    Raises:
        ConfigurationError: for an invalid setting, or a configuration breaking either
            invariant (see the module docstring).
    """

    __slots__ = (
        "_loaded",
        "_plan_key",
        "_plan_value",
        "_search",
        "_searching",
        "_snapshot",
        "_texts",
        "_window",
        "registry",
        "setting",
        "withholder",
    )

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        setting: ToolDeferral = "auto",
        search: bool = True,
        window: WindowOwner,
        texts: ModelTexts | None = None,
    ) -> None:
        self.registry = registry
        self._texts = texts or ModelTexts()
        self.setting = check_deferral(setting)
        self._searching = bool(search)
        self._search: ToolSearchTool | None = None  # built when deferral first engages
        self._window = window
        # Load order (a dict keeps it); a shared empty one until the first load (issue 27).
        self._loaded: dict[str, None] = _NONE_LOADED
        self._plan_key: tuple[object, ...] = ()
        self._plan_value: _Plan | None = None
        # The residency of each registered tool, read once per catalog change (so a later
        # change of a tool's attribute cannot flip a plan mid-run).
        self._snapshot: tuple[object, tuple[Tool, ...], tuple[Tool, ...]] = (None, (), ())
        #: Asked whether the permission gate withholds a tool outright (S12); the executor sets
        #: itself (a reference, not a bound method per agent: issue 27).
        self.withholder: Withholder | None = None

    def withheld(self, tool: Tool) -> bool:
        """Whether the permission gate withholds ``tool`` outright (S12)."""
        withholder = self.withholder
        return withholder is not None and withholder._withheld(tool)

    def _search_tool(self) -> ToolSearchTool | None:
        if self._searching and self._search is None:
            self._search = ToolSearchTool(self, self._texts)
        return self._search

    def check(self, window: Callable[[], int | None] | None = None) -> None:
        """Refuse a configuration breaking either invariant (S19), for the window given.

        The agent calls it once built and before switching model; a run re-plans every round.

        Raises:
            ConfigurationError: naming the invariant and what to change.
        """
        self.plan(window)

    @property
    def engaged(self) -> bool:
        """Whether deferred tools are withheld now."""
        return self.plan().engaged

    @property
    def search_tool(self) -> ToolSearchTool | None:
        """The built-in ``tool_search`` while it is offered (deferral engaged), else ``None``."""
        return self._search_tool() if self.plan().engaged else None

    @property
    def loaded(self) -> tuple[str, ...]:
        """Deferred tools the conversation loaded through ``tool_search``, in load order."""
        return tuple(self._loaded)

    def residency(
        self, window: Callable[[], int | None] | None = None
    ) -> tuple[tuple[str, ToolResidency], ...]:
        """Each registered tool's effective residency: deferred only while deferral is engaged."""
        plan = self.plan(window)
        deferred = {tool.name for tool in plan.deferred}
        return tuple(
            (tool.name, "deferred" if tool.name in deferred else "resident")
            for tool in self.registry
        )

    def visible(self, window: Callable[[], int | None] | None = None) -> tuple[ToolSpec, ...]:
        """The specs a request may carry before the permission filter: resident, search, loaded.

        ``window`` is the run's model's context window (default: the agent's). The same tuple
        object is returned until the catalog, the window or the loaded set changes, so a caller
        can cache on its identity.
        """
        return self.plan(window).visible

    def resolve(self, name: str) -> Tool | None:
        """The tool a call named ``name`` runs: a registered one, or ``tool_search`` if offered."""
        tool = self.registry.get(name)
        if tool is not None:
            return tool
        if name == TOOL_SEARCH_NAME:
            return self.search_tool
        return None

    def deferred_count(self) -> int:
        """How many schemas are withheld from requests right now."""
        plan = self.plan()
        return sum(1 for tool in plan.deferred if tool.name not in self._loaded)

    def plan(self, window: Callable[[], int | None] | None = None) -> _Plan:
        """What deferral does now (cached until the catalog, window or loaded set changes).

        ``window`` is read only when ``"auto"`` must weigh the deferred schemas' token share.
        """
        specs = self.registry.specs()
        if not specs:
            return _NO_TOOLS
        if self._snapshot[0] is not specs:
            tools = tuple(self.registry)
            deferred = tuple(tool for tool in tools if tool.residency == "deferred")
            self._snapshot = (specs, tools, deferred)
        _, tools, deferred = self._snapshot
        needs_window = self.setting == "auto" and 0 < len(deferred) < AUTO_DEFERRAL_TOOL_COUNT
        # An unknown window (None) weighs nothing: only the tool count can engage deferral.
        size = (
            ((window() if window else self._window._context_window()) or 0) if needs_window else 0
        )
        key = (specs, size, len(self._loaded))
        plan = self._plan_value
        if plan is not None and self._plan_key[0] is specs and self._plan_key[1:] == key[1:]:
            return plan
        plan = self._decide(tools, deferred, size)
        self._plan_key, self._plan_value = key, plan
        return plan

    def _decide(self, tools: tuple[Tool, ...], deferred: tuple[Tool, ...], window: int) -> _Plan:
        if self.setting == "off" or not deferred:
            return _Plan(False, (), self.registry.specs())
        if len(deferred) == len(tools):
            raise ConfigurationError(
                f"tool_deferral={self.setting!r} would defer every tool ({len(tools)}): at least "
                "one tool must stay resident (S19); leave one without defer=True, or pass "
                "tool_deferral='off'"
            )
        if self._searching and TOOL_SEARCH_NAME in self.registry:
            raise ConfigurationError(
                f"a registered tool is named {TOOL_SEARCH_NAME!r}, the name of the built-in tool "
                "that loads deferred tools (S19); rename it, or pass tool_search=False"
            )
        engaged = self.setting == "on" or _past_threshold(deferred, window)
        if not engaged:
            return _Plan(False, (), self.registry.specs())
        search = self._search_tool()
        if search is None:
            raise ConfigurationError(
                f"deferral is engaged ({len(deferred)} deferred tools) but tool_search=False: a "
                "deferred tool with no search tool to load it is unreachable (S19); enable "
                "tool_search, or pass tool_deferral='off'"
            )
        if self.withheld(search):
            raise ConfigurationError(
                f"deferral is engaged ({len(deferred)} deferred tools) but the permission gate "
                f"withholds {TOOL_SEARCH_NAME!r} (a deny rule names it): nothing could load a "
                "deferred tool (S19); remove that rule, or pass tool_deferral='off'"
            )
        loaded = self._loaded
        deferred_names = {tool.name for tool in deferred}
        visible = [tool.spec() for tool in tools if tool.name not in deferred_names]
        visible.append(search.spec())
        by_name = {tool.name: tool for tool in deferred}
        visible.extend(by_name[name].spec() for name in loaded if name in by_name)
        return _Plan(True, deferred, tuple(visible))

    def search(self, query: str, limit: int) -> list[Tool]:
        """Deferred tools matching ``query`` by name and description, best first.

        ``select:name1,name2`` picks tools by exact name. A tool the permission gate withholds
        outright (S12) is never found.
        """
        candidates = [tool for tool in self.plan().deferred if not self.withheld(tool)]
        text = query.strip()
        if text.lower().startswith("select:"):
            wanted = [part.strip() for part in text[len("select:") :].split(",") if part.strip()]
            by_name = {tool.name: tool for tool in candidates}
            return [by_name[name] for name in dict.fromkeys(wanted) if name in by_name][:limit]
        terms = _words(text)
        lowered = text.lower()
        scored: list[tuple[int, int, Tool]] = []
        for index, tool in enumerate(candidates):
            name = tool.name.lower()
            score = 100 if name == lowered else 0
            name_words = _words(tool.name)
            description_words = _words(tool.description)
            for term in terms:
                if term in name_words:
                    score += 10
                elif term in name:
                    score += 5
                if term in description_words:
                    score += 2
            if score:
                scored.append((-score, index, tool))
        scored.sort(key=lambda item: (item[0], item[1]))
        return [tool for _, _, tool in scored[:limit]]

    def note(self, message: Message) -> bool:
        """Load the tools a ``tool_search`` result in history names; whether any was new."""
        if (
            not self._searching
            or not isinstance(message, ToolMessage)
            or message.tool_name != TOOL_SEARCH_NAME
            or message.is_error
            or TOOL_SEARCH_NAME in self.registry
        ):
            return False
        added = False
        for name in _loaded_names(message.content):
            tool = self.registry.get(name)
            if tool is not None and tool in self._snapshot[2] and name not in self._loaded:
                if self._loaded is _NONE_LOADED:
                    self._loaded = {}
                self._loaded[name] = None
                added = True
        return added


def _past_threshold(deferred: tuple[Tool, ...], window: int) -> bool:
    if len(deferred) >= AUTO_DEFERRAL_TOOL_COUNT:
        return True
    tokens = sum(estimate_schema_tokens(tool.spec()) for tool in deferred)
    return window > 0 and tokens >= AUTO_DEFERRAL_SCHEMA_SHARE * window


def _loaded_names(content: str) -> list[str]:
    try:
        value = json.loads(content)
    except ValueError:
        return []
    items = value.get("loaded") if isinstance(value, dict) else None
    if not isinstance(items, list):
        return []
    return [
        item["name"]
        for item in items
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]


@final
class ToolSearchTool(Tool):
    """The built-in ``tool_search`` (S19): finds deferred tools and loads them for the next round.

    It searches the names and descriptions of the agent's deferred tools; each match is offered
    with its full schema from the model's next request on. It only reads the catalog
    (``risk="inspect"``), and goes through the permission gate like any other tool.
    """

    def __init__(self, catalog: ToolCatalog, texts: ModelTexts | None = None) -> None:
        self._texts = texts or ModelTexts()
        super().__init__(
            TOOL_SEARCH_NAME,
            self._texts.tool_search_description,
            {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": self._texts.tool_search_query_description,
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": _MAX_RESULTS,
                        "description": render(
                            self._texts.tool_search_max_results_description,
                            default=str(_DEFAULT_RESULTS),
                        ),
                    },
                },
                "required": ["query"],
            },
            risk="inspect",
            source="robota",
        )
        self._catalog = catalog

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Search the deferred tools; the result names the ones loaded."""
        query = str(args.get("query", ""))
        limit = args.get("max_results", _DEFAULT_RESULTS)
        found = self._catalog.search(query, limit if isinstance(limit, int) else _DEFAULT_RESULTS)
        texts = self._texts
        note = texts.tool_search_loaded_note if found else texts.tool_search_no_match_note
        return json.dumps(
            {
                "loaded": [{"name": t.name, "description": t.description} for t in found],
                "note": note,
            },
            ensure_ascii=False,
        )
