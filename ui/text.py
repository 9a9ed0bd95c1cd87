"""Inert text: anything from a link, an upload or a cell is escaped before it reaches Markdown (issue 17).

Streamlit renders Markdown in messages, captions, labels and ``st.markdown``; a string such as
``![x](http://host/p)`` would make the viewer's browser fetch that URL, and ``[text](javascript:…)`` would be a
link. ``md_escape`` backslash-escapes every Markdown and HTML-significant character so the text shows as typed.

Escapes do not stop GitHub-flavoured autolinks (issue 26 item 5): remark-gfm, which Streamlit uses, finds
``http://``, ``https://``, ``www.`` and ``name@host.tld`` in the text after escapes are resolved, so
``http\\://127.0.0.1:9/p`` still became ``<a href target=_blank>``. ``md_escape`` therefore puts an invisible
WORD JOINER (U+2060) inside each of those triggers (after the colon of ``://``, before the dot of ``www.``, before
``@``): the text reads and wraps the same, and the GFM autolink-literal patterns (GFM spec §6.9, extended
autolinks) no longer match.
"""

from __future__ import annotations

import re

# CommonMark: any ASCII punctuation may be backslash-escaped; these are the ones that start syntax.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$&=\"'])")
#: The GFM extended-autolink triggers: a scheme's "://", "www." (any case) and an e-mail's "@".
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?<=[wW]{3})(?=\.)|(?=@)")
#: WORD JOINER: zero width, no line break, not a word character for the autolink patterns.
JOINER = "\u2060"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def md_escape(text: object, *, max_len: int = 200) -> str:
    """``text`` as a string that Markdown shows literally: specials escaped, control and bidi characters
    removed, newlines folded to spaces, cut to ``max_len`` characters (with an ellipsis), and autolink
    triggers broken by an invisible word joiner (module docstring)."""
    s = _CONTROL.sub("", str(text)).replace("\r", " ").replace("\n", " ")
    if len(s) > max_len:
        s = s[: max_len - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", _AUTOLINK.sub(JOINER, s))


def md_quote(text: object, *, max_len: int = 200) -> str:
    """``md_escape`` wrapped in typographic quotes, for naming a user's column or value in a message."""
    return f"“{md_escape(text, max_len=max_len)}”"
