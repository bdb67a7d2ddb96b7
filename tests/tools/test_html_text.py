"""HTML to readable text for ``WebFetch`` (robota/tools/_html_text.py), with the standard
library's parser only."""

from __future__ import annotations

import pytest

from robota.tools._html_text import html_charset, html_to_text

BASE = "https://docs.example/guide/page.html"


def text(html: str) -> str:
    out, _, complete = html_to_text(html, BASE)
    assert complete
    return out


def test_headings_paragraphs_and_collapsed_whitespace() -> None:
    assert text("<h2>  Two\n words </h2><p>a\n\n   b</p><h6>six</h6>") == (
        "## Two words\n\na b\n\n###### six"
    )


def test_nested_lists_and_a_paragraph_inside_an_item() -> None:
    html = (
        "<ul><li><p>outer</p><ol><li>inner one</li><li>inner two</li></ol></li><li>last</li></ul>"
    )
    assert text(html) == "- outer\n  - inner one\n  - inner two\n- last"


def test_links_resolve_against_the_page_or_its_base() -> None:
    assert text('<a href="../api/">API</a>') == "API (https://docs.example/api/)"
    assert text('<base href="https://cdn.example/x/"><a href="y">Y</a>') == (
        "Y (https://cdn.example/x/y)"
    )
    # A link whose text is its address is shown once; script and fragment links are not shown.
    assert text('<a href="https://a.example/">https://a.example/</a>') == "https://a.example/"
    assert text('<a href="javascript:go()">go</a> <a href="#top">top</a>') == "go top"


def test_entities_are_decoded_and_pre_is_verbatim() -> None:
    html = "<p>&lt;tag&gt; &amp; &#8212; &eacute;</p><pre><code>if a &lt; b:\n    x  =  1\n</code></pre>"
    assert text(html) == "<tag> & \u2014 \u00e9\n\n```\nif a < b:\n    x  =  1\n```"


@pytest.mark.parametrize("tag", ["script", "style", "noscript", "template", "svg"])
def test_non_text_elements_are_dropped_with_everything_inside(tag: str) -> None:
    assert text(f"<p>before</p><{tag}><p>inside</p><b>x</b></{tag}><p>after</p>") == (
        "before\n\nafter"
    )


def test_a_table_keeps_its_cells_apart() -> None:
    assert text("<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>") == (
        "a | b\n\n1 | 2"
    )


def test_the_title_is_read_and_not_repeated_in_the_text() -> None:
    out, title, _ = html_to_text("<head><title> My\nPage </title></head><p>body</p>", BASE)
    assert (out, title) == ("body", "My Page")


def test_parsing_stops_once_enough_text_was_made() -> None:
    out, _, complete = html_to_text("<p>word</p>" * 100_000, BASE, enough=50)
    assert not complete
    assert 50 < len(out) < 100_000


def test_the_meta_charset_is_read_when_python_knows_it() -> None:
    assert html_charset(b'<meta charset="windows-1251">') == "cp1251"
    assert html_charset(b'<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">')
    assert html_charset(b'<meta charset="no-such-codec">') is None
    assert html_charset(b"<p>none</p>") is None


def test_parsing_stops_between_chunks_once_told_to() -> None:
    # Regression: a page of inline tags never finishes a block, so the text cap never stopped
    # the parse; megabytes were parsed in a worker thread after the run's abort or past the
    # fetch's time limit. The caller's stop (abort, deadline) is now asked between chunks.
    page = "<p>" + "<a href='/x'>word</a> " * 200_000 + "</p>"
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) >= 2

    text, _, complete = html_to_text(page, "https://example.com/", stop=stop)
    assert complete is False
    assert len(asked) == 2  # two chunks fed, then no more
    assert text.count("word") < 10_000  # a fraction of the page's 200,000
