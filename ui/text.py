"""Inert text: anything from a link, an upload or a cell is escaped before it reaches Markdown (issue 17).

Streamlit renders Markdown in messages, captions, labels and ``st.markdown``; a string such as
``![x](http://host/p)`` would make the viewer's browser fetch that URL, and ``[text](javascript:…)`` would be a
link. ``md_escape`` backslash-escapes every Markdown and HTML-significant character so the text shows as typed.
"""

from __future__ import annotations

import re

# CommonMark: any ASCII punctuation may be backslash-escaped; these are the ones that start syntax.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$&=\"'])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def md_escape(text: object, *, max_len: int = 200) -> str:
    """``text`` as a string that Markdown shows literally: specials escaped, control and bidi characters
    removed, newlines folded to spaces, and cut to ``max_len`` characters (with an ellipsis)."""
    s = _CONTROL.sub("", str(text)).replace("\r", " ").replace("\n", " ")
    if len(s) > max_len:
        s = s[: max_len - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", s)


def md_quote(text: object, *, max_len: int = 200) -> str:
    """``md_escape`` wrapped in typographic quotes, for naming a user's column or value in a message."""
    return f"“{md_escape(text, max_len=max_len)}”"
