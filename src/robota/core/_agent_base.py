"""The agent's own type, below the modules the ``Agent`` facade is built from (issue 32 item 2).

:class:`~robota.Agent` holds handoffs and guardrails, and a handoff's target and a guardrail's
check may themselves be agents: two public types that name each other. :class:`AgentBase` is
that name, one layer down: ``Agent`` is its one subclass (``Agent`` is final, and nothing else
derives from this class), so ``isinstance(x, AgentBase)`` is ``isinstance(x, Agent)``, and
``robota.core._handoff`` and ``robota.core._guardrails`` name an agent without importing the
facade that imports them. It carries no state and no behaviour; its declarations are the
agent's public readers those modules use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["AgentBase"]


class AgentBase:
    """A :class:`robota.Agent` — the class every agent is an instance of, below the facade.

    Read it as ``Agent``: ``Handoff.agent`` and a guardrail check that is an agent are typed with
    it because the modules that define them sit below ``robota.core._agent``.
    """

    if not TYPE_CHECKING:
        __slots__ = ()

    if TYPE_CHECKING:  # the agent's readers, defined by robota.Agent

        @property
        def name(self) -> str: ...
        @property
        def id(self) -> str: ...
        @property
        def closed(self) -> bool: ...
        @property
        def system_prompt(self) -> str | None: ...
