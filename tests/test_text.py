"""ui.text against an independent Markdown renderer (markdown-it-py, CommonMark + GFM tables/strikethrough).

Escaped text must render to exactly the literal text (control and bidi characters removed, newlines folded
to spaces, cut to max_len) with no link, image, HTML, emphasis, code or heading: issue 17, inert text.
"""

from __future__ import annotations

import re

from hypothesis import given, strategies as st
from markdown_it import MarkdownIt

from ui.text import md_escape, md_quote

MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_REMOVED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
#: Markdown/HTML syntax characters, letters, digits, spaces, newlines, controls and non-ASCII.
ALPHABET = st.sampled_from(list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + list("ab xX09\n\t\r") +
                           ["é", "€", "\u202e", "\x00", "\x1b", "ー", "😀"])


def _rendered(markdown: str) -> tuple[str, set[str]]:
    """Literal text of the first block, and the kinds of every token the renderer produced."""
    tokens = MD.parse(markdown)
    kinds = {t.type for t in tokens}
    text = ""
    for t in tokens:
        if t.type == "inline":
            for child in t.children or []:
                kinds.add(child.type)
                text += child.content if child.type == "text" else ("\n" if "break" in child.type else "")
    return text, kinds


def _expected(raw: str, max_len: int) -> str:
    s = _REMOVED.sub("", raw).replace("\r", " ").replace("\n", " ")
    return s if len(s) <= max_len else s[: max_len - 1] + "…"


@given(st.text(ALPHABET, max_size=120))
def test_escaped_text_renders_as_itself_and_nothing_else(raw):
    # In context, as the pages use it: after words in a message.
    text, kinds = _rendered("Column " + md_escape(raw) + " is empty.")
    assert kinds <= {"paragraph_open", "paragraph_close", "inline", "text", "softbreak"}, kinds
    assert text == ("Column " + _expected(raw, 200) + " is empty.").strip(" \t")


@given(st.text(ALPHABET, min_size=1, max_size=400), st.integers(5, 300))
def test_max_len_cuts_with_an_ellipsis(raw, max_len):
    text, _ = _rendered("x " + md_escape(raw, max_len=max_len) + " y")
    assert text == ("x " + _expected(raw, max_len) + " y").strip(" \t")


def test_the_issue_examples_render_inert():
    for raw in ("![x](http://host/path)", "[click](javascript:alert(1))", "<img src=http://host/x.png>",
                "<script>alert(1)</script>", "# heading", "1. item", "- item", "> quote", "| a | b |",
                "~~gone~~", "**bold**", "`code`", "&amp; &lt;", "$x^2$", "http://host/path"):
        text, kinds = _rendered(md_quote(raw))
        assert text == f"“{raw}”", (raw, text)
        assert not kinds & {"link_open", "image", "html_inline", "html_block", "code_inline", "em_open",
                            "strong_open", "s_open", "heading_open", "table_open", "bullet_list_open",
                            "ordered_list_open", "blockquote_open", "fence", "code_block"}, kinds
