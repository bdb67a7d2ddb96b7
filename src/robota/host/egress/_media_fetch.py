"""URL parts an adapter must fetch itself, fetched through the egress client (S06, issue 26).

A media part given by URL is sent as a URL when the vendor fetches that kind of URL itself; when
it does not (OpenAI's Chat Completions takes a PDF or an audio clip only as bytes; a local
OpenAI-compatible server fetches nothing), the adapter fetches it and sends the bytes inline.
Each adapter states which kinds it fetches as a :class:`FetchRule`; :class:`MediaFetcher` applies
it to a request just before the wire, in the adapter, never in core (core has no HTTP).

Every fetch goes through :class:`~robota.host.EgressClient`, so a part cannot reach a loopback,
private or metadata address the policy refuses, and a redirect is checked hop by hop. The fetch
honours the run's abort signal, is bounded per part (the rule's limit for its kind, and the
client's own ``max_bytes``), and checks the served media type: it must be one the part's kind
takes and equal the part's type when the part has one (a server that names no type, or
``application/octet-stream``, leaves the part's type standing); a part without a type takes the
served one. The vendor's own list of types for the kind is checked too. Any failure is a
:class:`~robota.host.MediaFetchError` naming the part, its place, its URL and the model, raised
before the vendor is called.

The request that goes to the wire carries the fetched bytes; the conversation keeps the URL (the
history, the journal and their size are unchanged). A part fetched once is kept in a small cache
(by value, at most :data:`CACHE_BYTES` in all), so a URL in an early message is not fetched again
on every later turn, and every turn sends the same bytes.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeAlias, TypeGuard, final
from urllib.parse import unquote, urlsplit

import httpx2

from robota.core import (
    AbortSignal,
    AudioPart,
    ChatRequest,
    ConfigurationError,
    DocumentPart,
    ImagePart,
    Message,
    MessagePart,
    ToolMessage,
    UserMessage,
)
from robota.host._errors import MediaFetchError, ResponseTooLargeError
from robota.host.egress._client import EgressClient
from robota.host.egress._policy import Rejected

__all__ = ["CACHE_BYTES", "NO_FETCH", "FetchRule", "MediaFetcher"]

CACHE_BYTES: Final = 64 * 1024 * 1024
"""The most fetched bytes a :class:`MediaFetcher` keeps for later turns."""

_UNNAMED_TYPES: Final = frozenset({"application/octet-stream", "binary/octet-stream"})
_MiB: Final = 1024 * 1024
_LARGEST: Final = 50 * _MiB
"""What a default client reads at most: the largest inline limit an adapter states (a PDF)."""

MediaPart: TypeAlias = ImagePart | DocumentPart | AudioPart
_Refuse: TypeAlias = Callable[[str, str, str], MediaFetchError]


@final
@dataclass(frozen=True, slots=True)
class FetchRule:
    """Which URL parts an adapter fetches for one model, and what it takes of them.

    Attributes:
        kinds: The part kinds (``"image"``, ``"document"``, ``"audio"``) whose URLs the vendor
            does not fetch itself; the adapter fetches them. Other kinds stay URLs.
        max_bytes: Per kind, the most bytes one fetched part may have (the vendor's own limit
            for inline data of that kind).
        accepts: Per kind, the media types the vendor takes inline (a kind not listed: every
            type the part takes).
        vendor_hosts: Hosts whose URLs the vendor reads itself whatever the kind (its own file
            store, which only the caller's credentials open); such a URL stays a URL.
    """

    kinds: frozenset[str]
    max_bytes: Mapping[str, int]
    accepts: Mapping[str, frozenset[str]] = field(default_factory=dict)
    vendor_hosts: frozenset[str] = frozenset()

    def largest(self) -> int:
        """The largest per-part limit (the size a default egress client is built to read)."""
        return max((self.max_bytes[kind] for kind in self.kinds), default=0)


NO_FETCH: Final = FetchRule(kinds=frozenset(), max_bytes={})
"""The rule of an adapter whose vendor fetches every URL it takes."""


def _media_type(served: str | None) -> str | None:
    """The bare media type of a ``Content-Type`` value (``None`` when it names none)."""
    if not served:
        return None
    bare = served.split(";", 1)[0].strip().lower()
    return None if not bare or bare in _UNNAMED_TYPES else bare


def _document_name(url: str) -> str | None:
    """The last path segment of ``url`` when it names a PDF, as a fetched document's file name.

    ``None`` otherwise (the adapter's default name is sent): a vendor may read the type from
    the name's suffix, so ``/download?id=3`` must not become a file called ``download``.
    """
    segment = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    return segment if segment.lower().endswith(".pdf") and "/" not in segment else None


@final
class MediaFetcher:
    """Fetches the URL parts a :class:`FetchRule` names, through an egress client (S06).

    Args:
        egress: The :class:`~robota.host.EgressClient` to fetch with (stays the caller's: not
            closed here). ``None``: a default client, built on the first fetch and closed by
            :meth:`aclose`.
        provider: The adapter's name, for messages.
    """

    __slots__ = ("_cache", "_cached_bytes", "_egress", "_owned", "_provider")

    def __init__(self, egress: EgressClient | None, *, provider: str) -> None:
        if egress is not None and not isinstance(egress, EgressClient):
            raise ConfigurationError(
                f"egress= must be a robota.host.EgressClient, got {type(egress).__name__}"
            )
        self._egress = egress
        self._owned: EgressClient | None = None
        self._provider = provider
        self._cache: OrderedDict[MediaPart, MediaPart] = OrderedDict()
        self._cached_bytes = 0

    async def prepare(
        self, request: ChatRequest, rule: FetchRule, *, signal: AbortSignal | None
    ) -> ChatRequest:
        """``request`` with every URL part ``rule`` names replaced by its fetched bytes.

        Returns ``request`` itself when nothing is to be fetched (a text-only request costs one
        type check per message).

        Raises:
            MediaFetchError: a part could not be fetched or is not sendable.
            AbortError: ``signal`` aborted during a fetch.
        """
        if not rule.kinds:
            return request
        messages: list[Message] | None = None
        for index, message in enumerate(request.messages):
            replaced = await self._message(message, index, request.model, rule, signal)
            if replaced is not message and messages is None:
                messages = list(request.messages[:index])
            if messages is not None:
                messages.append(replaced)
        if messages is None:
            return request
        return dataclasses.replace(request, messages=tuple(messages))

    def needs_fetch(self, request: ChatRequest, rule: FetchRule) -> bool:
        """Whether ``request`` holds a URL part ``rule`` names (no I/O)."""
        if not rule.kinds:
            return False
        for message in request.messages:
            for part in _parts_of(message):
                if _fetchable(part, rule):
                    return True
        return False

    async def _message(
        self,
        message: Message,
        index: int,
        model: str,
        rule: FetchRule,
        signal: AbortSignal | None,
    ) -> Message:
        parts = _parts_of(message)
        if not parts:
            return message
        fetched: list[MessagePart] = []
        changed = False
        for position, part in enumerate(parts):
            if _fetchable(part, rule):
                fetched.append(await self._fetched(part, index, position, model, rule, signal))
                changed = True
            else:
                fetched.append(part)
        if not changed:
            return message
        if isinstance(message, ToolMessage):
            media = tuple(p for p in fetched if p.kind != "text")
            return dataclasses.replace(message, parts=media)
        return dataclasses.replace(message, content=tuple(fetched))  # type: ignore[arg-type]

    async def _fetched(
        self,
        part: MediaPart,
        message_index: int,
        part_index: int,
        model: str,
        rule: FetchRule,
        signal: AbortSignal | None,
    ) -> MediaPart:
        hit = self._cache.get(part)
        if hit is not None:
            self._cache.move_to_end(part)
            return hit
        url = part.url
        assert url is not None
        limit = rule.max_bytes[part.kind]

        def refuse(reason: str, why: str, fix: str) -> MediaFetchError:
            return MediaFetchError(
                f"provider {self._provider!r} could not fetch {part!r} (part {part_index} of "
                f"message {message_index}) for model {model!r}: {why}; {fix}",
                url=url,
                part_kind=part.kind,
                message_index=message_index,
                part_index=part_index,
                model=model,
                reason=reason,
            )

        client = self._client(limit)
        try:
            result = await client.get(url, signal=signal)
        except ResponseTooLargeError:
            raise refuse(
                "too_large",
                "the body is larger than the egress client's max_bytes",
                "pass the bytes (data=) or a larger EgressClient(max_bytes=...)",
            ) from None
        except httpx2.TransportError as error:
            raise refuse(
                "network",
                f"no answer ({type(error).__name__}: {error})",
                "check the URL, or pass the bytes (data=)",
            ) from None
        if isinstance(result, Rejected):
            # S06: a destination the egress policy refuses is never fetched.
            raise refuse(
                "egress_refused",
                f"the egress policy refused it ({result.reason})",
                "use a public URL, or pass the bytes (data=)",
            )
        if not 200 <= result.status < 300:
            raise refuse(
                "http_status",
                f"the server answered HTTP {result.status}",
                "check the URL, or pass the bytes (data=)",
            )
        if len(result.content) > limit:
            raise refuse(
                "too_large",
                f"{len(result.content)} bytes is more than the {limit // _MiB} MiB this adapter "
                f"sends inline for one {part.kind}",
                "pass a smaller file",
            )
        media = self._media_type(part, result.headers.get("content-type"), refuse, rule)
        data = result.content
        made: MediaPart
        if isinstance(part, DocumentPart):
            made = DocumentPart(data=data, media_type=media, name=part.name or _document_name(url))
        else:
            made = type(part)(data=data, media_type=media)
        self._remember(part, made)
        return made

    def _media_type(
        self, part: MediaPart, header: str | None, refuse: _Refuse, rule: FetchRule
    ) -> str:
        served = _media_type(header)
        declared = part.media_type
        if served is None:
            if declared is None:
                raise refuse(
                    "media_type",
                    "the server named no media type and the part declares none",
                    "pass media_type=",
                )
            media = declared
        else:
            try:
                # The part's own constructor normalises the spelling (image/jpg → image/jpeg)
                # and refuses a type its kind does not take.
                normalised: str | None = type(part)(url=part.url, media_type=served).media_type
                media = normalised or served
            except ConfigurationError:
                raise refuse(
                    "media_type",
                    f"the server sent {served!r}, which a {part.kind} part does not take",
                    "check that the URL serves the file itself (not a web page)",
                ) from None
            if declared is not None and media != declared:
                raise refuse(
                    "media_type",
                    f"the server sent {served!r}, the part declares {declared!r}",
                    "pass the media_type= the server sends, or fix the URL",
                )
        accepted = rule.accepts.get(part.kind)
        if accepted is not None and media not in accepted:
            raise refuse(
                "media_type",
                f"{media!r} is not a type this adapter sends inline (for {part.kind} it takes "
                f"{', '.join(sorted(accepted))})",
                "convert the file",
            )
        return media

    def _remember(self, part: MediaPart, made: MediaPart) -> None:
        size = len(made.data or b"")
        if size > CACHE_BYTES:
            return
        self._cache[part] = made
        self._cached_bytes += size
        while self._cached_bytes > CACHE_BYTES:
            _, old = self._cache.popitem(last=False)
            self._cached_bytes -= len(old.data or b"")

    def _client(self, limit: int) -> EgressClient:
        if self._egress is not None:
            return self._egress
        if self._owned is None:
            # Built to read what the largest part any rule allows; each part is then held to
            # its own kind's limit.
            self._owned = EgressClient(max_bytes=max(limit, _LARGEST))  # S06: the default policy
        return self._owned

    async def aclose(self) -> None:
        """Close the default egress client, if one was built (a caller's is left open)."""
        owned, self._owned = self._owned, None
        self._cache.clear()
        self._cached_bytes = 0
        if owned is not None:
            await owned.aclose()


def _fetchable(part: MessagePart, rule: FetchRule) -> TypeGuard[MediaPart]:
    if not isinstance(part, (ImagePart, DocumentPart, AudioPart)) or part.url is None:
        return False
    if part.kind not in rule.kinds:
        return False
    return not rule.vendor_hosts or (urlsplit(part.url).hostname or "") not in rule.vendor_hosts


def _parts_of(message: Message) -> Sequence[MessagePart]:
    if isinstance(message, UserMessage):
        content = message.content
        return () if isinstance(content, str) else content
    if isinstance(message, ToolMessage):
        return message.parts
    return ()
