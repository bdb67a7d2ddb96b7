"""``WebFetch`` (issue 30): a real HTTP server on 127.0.0.1, reached only through the egress
client under the test-only loopback allowance (S06)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

import robota
import robota.host
import robota.tools
from robota.testing import ScriptedProvider
from tools._http_site import OTHER, Site, client, redirect, reply, serve

PAGE = b"""<!doctype html><html><head><title>The  Page</title>
<style>body { color: red }</style><script>var secret = "never shown";</script></head>
<body><nav><a href="#main">skip</a></nav>
<h1>Heading &amp; more</h1>
<p>First   paragraph,
   with <a href="/docs/intro?x=1">the docs</a> and <code>x = 1</code>.</p>
<ul><li>one</li><li>two</li></ul>
<pre>def f():
    return  1</pre>
<noscript>enable js</noscript><template><p>hidden template</p></template>
<svg><text>vector text</text></svg>
</body></html>"""


@pytest.fixture
def site() -> Iterator[Site]:
    yield from serve()


def _ctx(tool: robota.Tool, signal: robota.AbortSignal | None = None) -> robota.ToolContext:
    return robota.ToolContext(
        signal=signal or robota.AbortController().signal, call_id="c1", tool_name=tool.name
    )


async def fetch(tool: robota.Tool, url: str, **args: Any) -> robota.ToolResult:
    """Run the tool as the executor would: arguments validated, then the body."""
    checked = tool.validate_arguments({"url": url, **args})
    result = await tool.execute(checked, _ctx(tool))
    assert isinstance(result, robota.ToolResult)
    return result


async def test_html_becomes_readable_text(site: Site) -> None:
    site.routes["/page"] = reply(200, PAGE, "text/html; charset=utf-8")
    result = await fetch(robota.tools.web_fetch(client=client()), site.url("/page"))
    assert not result.is_error
    first, *rest = result.content.splitlines()
    assert first == f"URL: {site.url('/page')} (HTTP 200, text/html)"
    text = "\n".join(rest)
    assert "Title: The Page" in text
    assert "# Heading & more" in text
    assert f"First paragraph, with the docs ({site.url('/docs/intro?x=1')}) and `x = 1`." in text
    assert "- one\n- two" in text
    assert "```\ndef f():\n    return  1\n```" in text  # pre kept verbatim
    for hidden in ("never shown", "color: red", "enable js", "hidden template", "vector text"):
        assert hidden not in text
    assert "skip" in text
    assert "#main" not in text


async def test_the_charset_comes_from_the_header_or_the_meta_tag(site: Site) -> None:
    site.routes["/latin1"] = reply(
        200, "<p>café</p>".encode("latin-1"), "text/html; charset=iso-8859-1"
    )
    site.routes["/meta"] = reply(
        200,
        '<meta charset="windows-1251"><p>Привет</p>'.encode("cp1251"),
        "text/html",
    )
    site.routes["/broken"] = reply(200, b"<p>ok \xff\xfe here</p>", "text/html")
    tool = robota.tools.web_fetch(client=client())
    assert (await fetch(tool, site.url("/latin1"))).content.endswith("café")
    assert (await fetch(tool, site.url("/meta"))).content.endswith("Привет")
    # Default UTF-8 with replacement: bytes that are not UTF-8 show as U+FFFD.
    assert (await fetch(tool, site.url("/broken"))).content.endswith("ok \ufffd\ufffd here")


async def test_text_json_and_markdown_are_returned_as_they_are(site: Site) -> None:
    site.routes["/a.json"] = reply(200, b'{"a": [1, 2]}', "application/json")
    site.routes["/a.md"] = reply(200, b"# Title\n\n* item <b>x</b>", "text/markdown")
    site.routes["/a.txt"] = reply(200, b"plain   text", "text/plain")
    tool = robota.tools.web_fetch(client=client())
    assert (await fetch(tool, site.url("/a.json"))).content.endswith('\n\n{"a": [1, 2]}')
    assert (await fetch(tool, site.url("/a.md"))).content.endswith("\n\n# Title\n\n* item <b>x</b>")
    assert (await fetch(tool, site.url("/a.txt"))).content.endswith("\n\nplain   text")


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n"),
        ("application/pdf", b"%PDF-1.4"),
        ("application/octet-stream", b"\x00\x01\x02binary"),
    ],
)
async def test_binary_types_are_refused_naming_the_type(
    site: Site, content_type: str, body: bytes
) -> None:
    site.routes["/file"] = reply(200, body, content_type)
    result = await fetch(robota.tools.web_fetch(client=client()), site.url("/file"))
    assert result.is_error
    assert content_type in result.content
    assert "does not read" in result.content


async def test_an_http_error_status_is_an_error_result_naming_it(site: Site) -> None:
    result = await fetch(robota.tools.web_fetch(client=client()), site.url("/missing"))
    assert result.is_error
    assert result.content.startswith(f"The server answered HTTP 404 for {site.url('/missing')}")
    assert "# Not Found" in result.content  # the page's own words, to help the model


async def test_s06_a_redirect_chain_is_followed_and_the_final_url_named(site: Site) -> None:
    site.routes["/old"] = redirect("/older")
    site.routes["/older"] = redirect(site.url("/page"), status=301)
    site.routes["/page"] = reply(200, b"<p>arrived</p>", "text/html")
    result = await fetch(robota.tools.web_fetch(client=client()), site.url("/old"))
    assert not result.is_error
    lines = result.content.splitlines()
    assert lines[0] == f"URL: {site.url('/page')} (HTTP 200, text/html)"
    assert lines[1] == f"Redirected from: {site.url('/old')} -> {site.url('/older')}"
    assert lines[-1] == "arrived"


@pytest.mark.parametrize(
    "location",
    [
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata
        "http://127.0.0.1:{other_port}/",  # a literal loopback address, another port
        "http://10.0.0.1/admin",  # a private address
        f"http://{OTHER}:{{port}}/page",  # resolves to loopback, not admitted
    ],
)
async def test_s06_a_redirect_to_a_refused_address_is_refused_with_the_reason(
    site: Site, location: str
) -> None:
    target = location.format(other_port=site.port + 1, port=site.port)
    site.routes["/jump"] = redirect(target)
    site.routes["/page"] = reply(200, b"<p>must not be read</p>", "text/html")
    result = await fetch(robota.tools.web_fetch(client=client()), site.url("/jump"))
    assert result.is_error
    assert result.content.startswith(
        f"The fetch of {site.url('/jump')} was refused at a redirect to {target}: "
    )
    assert f"(redirect 1 from {site.url('/jump')})" in result.content
    assert "Traceback" not in result.content
    assert [path for path, _ in site.requests] == ["/jump"]  # nothing after the refusal


async def test_s06_a_refused_first_url_is_an_error_result(site: Site) -> None:
    tool = robota.tools.web_fetch(client=client())
    literal = await fetch(tool, f"http://127.0.0.1:{site.port}/page")
    assert literal.is_error
    assert "was refused" in literal.content
    scheme = await fetch(tool, "file:///etc/passwd")
    assert scheme.is_error
    assert "was refused" in scheme.content
    assert site.requests == []


async def test_redirects_are_capped(site: Site) -> None:
    site.routes["/loop"] = redirect("/loop")
    result = await fetch(robota.tools.web_fetch(client=client(max_redirects=3)), site.url("/loop"))
    assert result.is_error
    assert "more than 3 redirects" in result.content
    assert len(site.requests) == 4


async def test_the_default_client_refuses_loopback(site: Site) -> None:
    """Without a caller's client the default policy applies: no allowance, loopback refused."""
    site.routes["/page"] = reply(200, b"<p>x</p>", "text/html")
    result = await fetch(robota.tools.web_fetch(), f"http://localhost:{site.port}/page")
    assert result.is_error
    assert "was refused" in result.content
    assert site.requests == []


async def test_the_body_is_read_only_up_to_max_bytes_and_the_answer_says_so(site: Site) -> None:
    body = b"<p>" + b"word " * 400_000 + b"</p><p>THE END</p>"  # about 2 MB
    site.routes["/huge"] = reply(200, body, "text/html")
    tool = robota.tools.web_fetch(client=client(), max_bytes=10_000)
    result = await fetch(tool, site.url("/huge"))
    assert not result.is_error
    assert (
        "[The response was larger than 10000 bytes: only the first 10000 were read.]"
        in result.content
    )
    assert "THE END" not in result.content
    assert result.content.count("word") == 9_997 // 5  # the 10,000 bytes read, less "<p>"


async def test_the_returned_text_is_capped_and_says_where_it_was_cut(site: Site) -> None:
    site.routes["/long"] = reply(200, b"x" * 5_000, "text/plain")
    tool = robota.tools.web_fetch(client=client())
    result = await fetch(tool, site.url("/long"), max_chars=1_000)
    assert result.content.endswith(
        "x" * 1_000 + "\n\n[Cut at character 1000 of 5000: the rest of the page is not shown.]"
    )


def _stall(site: Site) -> Any:
    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        handler.wfile.write(b"<p>start")
        handler.wfile.flush()
        site.release.wait(timeout=30)  # until the test ends

    return route


async def test_a_slow_server_is_stopped_at_the_time_cap(site: Site) -> None:
    site.routes["/slow"] = _stall(site)
    tool = robota.tools.web_fetch(client=client(), timeout=0.5)
    result = await fetch(tool, site.url("/slow"))
    assert result.is_error
    assert (
        result.content
        == f"The fetch of {site.url('/slow')} took longer than 0.5 s and was stopped."
    )


async def test_s23_the_runs_abort_cancels_the_fetch(site: Site) -> None:
    site.routes["/slow"] = _stall(site)
    tool = robota.tools.web_fetch(client=client())
    controller = robota.AbortController()
    checked = tool.validate_arguments({"url": site.url("/slow")})
    work = asyncio.ensure_future(tool.execute(checked, _ctx(tool, controller.signal)))
    await asyncio.to_thread(site.arrived.wait, 30)  # the server is answering, slowly
    controller.abort("user pressed Ctrl-C")
    with pytest.raises(robota.AbortError):
        await work


async def test_no_keys_or_cookies_are_sent_and_the_user_agent_names_robota(site: Site) -> None:
    site.routes["/page"] = reply(200, b"<p>x</p>", "text/html", Set_Cookie="session=abc")
    tool = robota.tools.web_fetch(client=client())
    await fetch(tool, site.url("/page"))
    await fetch(tool, site.url("/page"))
    for _, headers in site.requests:
        assert headers["user-agent"].startswith("robota-webfetch/")
        assert "authorization" not in headers
        assert "cookie" not in headers
        assert not any("key" in name for name in headers)


def test_bad_limits_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        robota.tools.web_fetch(max_bytes=0)
    with pytest.raises(ValueError, match="timeout"):
        robota.tools.web_fetch(timeout=0)
    with pytest.raises(TypeError, match="EgressClient"):
        robota.tools.web_fetch(client=object())  # type: ignore[arg-type]


# -- permissions (S12, S21) ------------------------------------------------------------------


def _decide(policy: robota.PermissionPolicy, url: str) -> str:
    gate = robota.PermissionGate(policy)
    return gate.evaluate(robota.tools.web_fetch(), {"url": url}).behavior


def test_s12_webfetch_domain_rules_judge_the_url_argument() -> None:
    allow = robota.PermissionPolicy(allow=["WebFetch(domain:example.com)"])
    assert _decide(allow, "https://example.com/a") == "allow"
    assert _decide(allow, "https://docs.example.com/a") == "allow"
    assert _decide(allow, "https://example.com.evil.test/") == "ask"
    assert _decide(allow, "https://evil.test/?q=example.com") == "ask"
    deny = robota.PermissionPolicy(deny=["WebFetch(domain:example.com)"], mode="bypass")
    assert _decide(deny, "https://EXAMPLE.com./x") == "deny"  # read as the egress client reads it
    assert _decide(deny, "https://other.test/") == "allow"


def test_s21_webfetch_is_execute_class_so_an_unknown_domain_asks() -> None:
    tool = robota.tools.web_fetch()
    assert tool.risk == "execute"
    assert tool.permission_argument == robota.PermissionArgument("url", "url")
    assert _decide(robota.PermissionPolicy(), "https://unknown.test/") == "ask"
    assert _decide(robota.PermissionPolicy(mode="accept_edits"), "https://unknown.test/") == "ask"
    assert _decide(robota.PermissionPolicy(mode="plan"), "https://unknown.test/") == "deny"


async def test_a_fetch_through_an_agent_runs_only_where_a_rule_allows(site: Site) -> None:
    site.routes["/page"] = reply(200, b"<h2>Welcome</h2>", "text/html")
    calls: list[Any] = [
        ("WebFetch", {"url": site.url("/page")}),
        ("WebFetch", {"url": f"http://{OTHER}:{site.port}/page"}),
    ]
    agent = robota.Agent(
        provider=ScriptedProvider([calls, "done"]),
        model="m",
        tools=[robota.tools.web_fetch(client=client())],
        tool_gate=robota.PermissionGate(
            robota.PermissionPolicy(allow=["WebFetch(domain:site.test)"])
        ),
    )
    await agent.run("fetch")
    allowed, asked = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert allowed.endswith("## Welcome")
    assert "no one is attached" in asked  # not allowed by the rule: asks; nobody answers
    assert [path for path, _ in site.requests] == ["/page"]


async def test_a_long_html_page_is_converted_only_as_far_as_the_text_cap(site: Site) -> None:
    body = b"<p>paragraph of words</p>" * 100_000 + b"<p>THE END</p>"  # 2.5 MB of HTML
    site.routes["/long.html"] = reply(200, body, "text/html")
    tool = robota.tools.web_fetch(client=client())
    result = await fetch(tool, site.url("/long.html"), max_chars=1_000)
    assert not result.is_error
    assert result.content.endswith(
        "paragraph of words\n\n[Cut at character 1000: the rest of the page is not shown.]"
    )
    assert "THE END" not in result.content
