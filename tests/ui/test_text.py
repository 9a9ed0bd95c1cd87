"""ui.text against an independent Markdown renderer (markdown-it-py, CommonMark + GFM tables/strikethrough, and
the linkify plugin, linkify-it-py, for literal URLs and e-mail addresses).

Escaped text must render to exactly the literal text (control and bidi characters removed, newlines folded
to spaces, cut to max_len; the invisible word joiners that break autolinks ignored) with no link, image, HTML,
emphasis, code or heading: issue 17, inert text. markdown-it's linkify runs before escapes are resolved, but
remark-gfm (Streamlit's renderer) finds autolink literals in the text after it, so the rendered text is also
searched with the GFM spec's own extended-autolink triggers (§6.9), written out here: issue 26 item 5.
"""

from __future__ import annotations

import re

from hypothesis import given, strategies as st
from markdown_it import MarkdownIt

from ui.text import md_escape, md_quote

MD = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "strikethrough", "linkify"])
#: GFM §6.9 extended autolinks, looser than the spec (any position, no domain check), so stricter as a test:
#: "www.", "http://", "https://" in any case, and an e-mail address's local part, "@" and a dotted domain.
GFM_AUTOLINK = re.compile(r"www\.|https?://|[A-Za-z0-9._+-]@[A-Za-z0-9_-]+\.[A-Za-z0-9_-]", re.I)
JOINER = "\u2060"  # U+2060 WORD JOINER: invisible, so the reader sees the text without it
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
                if child.type in ("text", "text_special"):
                    text += child.content
                elif "break" in child.type:
                    text += "\n"
    assert not GFM_AUTOLINK.search(text), text  # remark-gfm would turn this into a link
    return text.replace(JOINER, ""), kinds


def _expected(raw: str, max_len: int) -> str:
    s = _REMOVED.sub("", raw).replace("\r", " ").replace("\n", " ")
    return s if len(s) <= max_len else s[: max_len - 1] + "…"


@given(st.text(ALPHABET, max_size=120))
def test_escaped_text_renders_as_itself_and_nothing_else(raw):
    # In context, as the pages use it: after words in a message.
    text, kinds = _rendered("Column " + md_escape(raw) + " is empty.")
    assert kinds <= {"paragraph_open", "paragraph_close", "inline", "text", "text_special", "softbreak"}, kinds
    assert text == ("Column " + _expected(raw, 200) + " is empty.").strip(" \t")


@given(st.text(ALPHABET, min_size=1, max_size=400), st.integers(5, 300))
def test_max_len_cuts_with_an_ellipsis(raw, max_len):
    text, _ = _rendered("x " + md_escape(raw, max_len=max_len) + " y")
    assert text == ("x " + _expected(raw, max_len) + " y").strip(" \t")


def test_the_issue_examples_render_inert():
    for raw in ("![x](http://host/path)", "[click](javascript:alert(1))", "<img src=http://host/x.png>",
                "<script>alert(1)</script>", "# heading", "1. item", "- item", "> quote", "| a | b |",
                "~~gone~~", "**bold**", "`code`", "&amp; &lt;", "$x^2$", "http://host/path",
                "http://127.0.0.1:9/p", "HTTPS://Host.example/x", "www.example.org", "WwW.example.org/p",
                "mail me at a.b+c@host.example.org", "mailto:a@b.co", "xmpp:a@b.co/r", "<http://host/p>"):
        text, kinds = _rendered(md_quote(raw))
        assert text == f"“{raw}”", (raw, text)
        assert not kinds & {"link_open", "image", "html_inline", "html_block", "code_inline", "em_open",
                            "strong_open", "s_open", "heading_open", "table_open", "bullet_list_open",
                            "ordered_list_open", "blockquote_open", "fence", "code_block"}, kinds


#: Pieces that build autolink literals (and near misses) when strung together.
AUTOLINK_PIECES = st.sampled_from(["http", "https", "HTTP", "://", ":", "//", "www", "WWW", ".", "wwww", "@",
                                   "a", "b.co", "127.0.0.1", ":9/p", " ", "(", "*", "_", "~", "mailto:", "x+y",
                                   "-", "/", "\n"])


@given(st.lists(AUTOLINK_PIECES, max_size=30).map("".join))
def test_autolink_literals_never_survive(raw):
    text, kinds = _rendered("Row " + md_escape(raw, max_len=400) + " ignored.")
    assert "link_open" not in kinds, raw
    assert text == ("Row " + _expected(raw, 400) + " ignored.").strip(" \t")
