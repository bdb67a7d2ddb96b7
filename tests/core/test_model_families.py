"""Model families in core's capability lookup (S13, S30): exact table, family, default, unknown."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Literal

import pytest

import robota
from robota.core import (
    ChatRequest,
    ChatResponse,
    ModelCapabilities,
    ModelFamily,
    Provider,
    ProviderCapabilities,
    StreamEvent,
    choose_output_transport,
    lookup_model_capabilities,
    match_model_family,
    model_capabilities,
    model_capability,
    stream_response,
)

THINKS = ModelFamily(
    "thinker",
    ("think-*",),
    ModelCapabilities(reasoning=True, structured_output="json_mode"),
    "docs-2026-11",
    exclude=("*-chat*",),
)
PLAIN = ModelFamily("plain", ("think-*", "plain-*"), ModelCapabilities(reasoning=False), "x")


class _Tabled(Provider):
    name = "tabled"

    def __init__(
        self,
        table: ProviderCapabilities | None,
        provenance: Literal["vendor_default", "custom"] = "vendor_default",
    ) -> None:
        self.table = table
        self.provenance: Literal["vendor_default", "custom"] = provenance

    async def chat(self, request: ChatRequest, *, signal: object = None) -> ChatResponse:
        return ChatResponse("x")

    async def chat_stream(
        self, request: ChatRequest, *, signal: object = None
    ) -> AsyncIterator[StreamEvent]:
        async for event in stream_response(await self.chat(request)):
            yield event

    def capabilities(self) -> ProviderCapabilities | None:
        return self.table

    def endpoint_provenance(self) -> Literal["vendor_default", "custom"]:
        return self.provenance


def _table() -> ProviderCapabilities:
    return ProviderCapabilities(
        default_model=ModelCapabilities(tools=True, structured_output="json_schema"),
        models={"think-1": ModelCapabilities(reasoning=False, vision=True)},
        families=(THINKS, PLAIN),
    )


def test_s30_the_exact_table_wins_over_a_family_that_matches_the_name() -> None:
    found = lookup_model_capabilities(_Tabled(_table()), "think-1")
    assert found.source == "exact"
    assert found.family is None
    assert found.capabilities == ModelCapabilities(
        tools=True, structured_output="json_schema", vision=True, reasoning=False
    )


def test_s30_an_unlisted_name_gets_the_first_matching_family_over_the_default() -> None:
    found = lookup_model_capabilities(_Tabled(_table()), "think-2")
    assert found.source == "family"
    assert found.family is THINKS  # the first match wins, though PLAIN matches too
    assert found.own == THINKS.capabilities
    assert found.capabilities == ModelCapabilities(
        tools=True, structured_output="json_mode", reasoning=True
    )
    assert model_capability(_Tabled(_table()), "think-2", "reasoning") is True
    assert model_capabilities(_Tabled(_table()), "think-2") == found.capabilities


def test_s30_an_excluded_name_falls_to_the_next_family_or_the_default() -> None:
    assert lookup_model_capabilities(_Tabled(_table()), "think-2-chat").family is PLAIN
    found = lookup_model_capabilities(_Tabled(_table()), "other")
    assert found.source == "default"
    assert found.family is None
    assert found.own is None
    assert found.capabilities == _table().default_model
    # Silence stays silence: nothing states reasoning for "other" (S30).
    assert model_capability(_Tabled(_table()), "other", "reasoning") is None


def test_s30_no_table_is_unknown() -> None:
    found = lookup_model_capabilities(_Tabled(None), "think-2")
    assert (found.capabilities, found.source, found.family) == (None, "unknown", None)


def test_s18_the_family_chooses_the_output_transport_even_on_a_custom_endpoint() -> None:
    # The vendor default is not extended to a custom endpoint (S18); a family rule is the
    # model's own statement, like its exact row.
    assert choose_output_transport(_Tabled(_table()), "think-2") == "json_mode"
    assert choose_output_transport(_Tabled(_table(), "custom"), "think-2") == "json_mode"
    assert choose_output_transport(_Tabled(_table(), "custom"), "other") == "instruction"
    assert choose_output_transport(_Tabled(_table()), "other") == "json_schema"


def test_s13_a_family_matches_by_glob_case_insensitively() -> None:
    assert THINKS.matches("think-x")
    # Vendors' ids are lowercase; a name in another case is the same model (issue 26 review).
    assert THINKS.matches("Think-X")
    assert not THINKS.matches("THINK-X-CHAT-latest")
    assert not THINKS.matches("think")
    assert not THINKS.matches("think-x-chat-latest")
    assert match_model_family((THINKS, PLAIN), "plain-3") is PLAIN
    assert match_model_family((THINKS, PLAIN), "nothing") is None
    assert match_model_family((), "think-x") is None


@pytest.mark.parametrize("patterns", [(), "think-*"])
def test_s13_a_family_without_patterns_is_refused_with_the_fix(patterns: object) -> None:
    with pytest.raises(robota.ConfigurationError, match=r"patterns=\('gpt-5\*',\)"):
        ModelFamily("bad", patterns, ModelCapabilities(), "x")  # type: ignore[arg-type]


def test_s13_a_family_condition_states_what_a_glob_cannot() -> None:
    def minor_at_least_7(name: str) -> bool:
        tail = name.removeprefix("think-")
        return tail.isdigit() and int(tail) >= 7

    later = ModelFamily("later", ("think-*",), ModelCapabilities(), "x", condition=minor_at_least_7)
    assert later.matches("think-7")
    assert later.matches("THINK-10")
    assert not later.matches("think-6")
    assert not later.matches("think-x")


def test_s13_family_key_reads_a_derived_name_before_family_matching() -> None:
    table = ProviderCapabilities(
        models={"think-1": ModelCapabilities(reasoning=False)},
        families=(THINKS,),
        family_key=lambda model: model.removeprefix("tuned:").partition(":")[0],
    )
    found = lookup_model_capabilities(_Tabled(table), "tuned:think-9:acme:abc")
    assert (found.source, found.family) == ("family", THINKS)
    # The exact table is asked with the name as given: a derived name never takes a row.
    assert lookup_model_capabilities(_Tabled(table), "tuned:think-1:acme:abc").family is THINKS


class _Excluding(_Tabled):
    def unsupported_request_settings(self, request: ChatRequest) -> tuple[str, ...]:
        return ("temperature", "seed") if request.effort == "high" else ()


@pytest.mark.parametrize("table", [None, "stated"])
def test_s28_unsupported_settings_adds_what_the_request_itself_excludes(
    table: str | None,
) -> None:
    from robota.core.providers import unsupported_settings, without_unsupported_settings

    stated = ProviderCapabilities(
        default_model=ModelCapabilities(settings=frozenset({"temperature", "top_p"}))
    )
    provider = _Excluding(stated if table else None)
    settings = robota.ModelSettings(temperature=0.5, top_p=0.5, seed=3)
    thinking = ChatRequest("m", [robota.UserMessage("x")], effort="high", settings=settings)
    plain = ChatRequest("m", [robota.UserMessage("x")], effort="low", settings=settings)
    # Field order; the table's part (seed, when a table states settings) and the request's.
    assert unsupported_settings(provider, thinking) == ("temperature", "seed")
    assert unsupported_settings(provider, plain) == (("seed",) if table else ())
    sent = without_unsupported_settings(provider, thinking)
    assert (sent.temperature, sent.settings.top_p, sent.settings.seed) == (None, 0.5, None)


def test_s28_the_request_seam_defaults_to_nothing() -> None:
    provider = _Tabled(None)
    request = ChatRequest("m", [robota.UserMessage("x")], temperature=0.5)
    assert provider.unsupported_request_settings(request) == ()
