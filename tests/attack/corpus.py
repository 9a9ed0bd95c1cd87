"""Generated hostile inputs for the attack tests (issue 17): files for every upload path, links for every page.

Pure Python; the bombs are built at the size the server accepts (just under 50 MB), so a test measures the
real worst case. Each file comes with the words its refusal message must contain (what is wrong).
"""

from __future__ import annotations

import codecs

#: Just under the server's upload limit (``server.maxUploadSize`` = 50 MB, ``dpdash.common.data.MAX_UPLOAD_BYTES``).
BOMB_BYTES = 49_900_000


def _fill(unit: bytes, size: int, prefix: bytes = b"", suffix: bytes = b"") -> bytes:
    n = max(0, (size - len(prefix) - len(suffix)) // len(unit))
    return prefix + unit * n + suffix


def bomb(name: str, size: int = BOMB_BYTES) -> tuple[bytes, str]:
    """(file bytes, regex the refusal message must match) of one resource-exhaustion file of ``size`` bytes."""
    build, expected = BOMBS[name]
    return build(size), expected


#: Name → (builder of a file of the given size, regex its refusal message must match).
BOMBS = {
    # The probe's 9.9 MB two-line file with 1,000,000 columns, scaled to the upload limit.
    "column-bomb": (lambda n: _fill(b"a,", n // 2, suffix=b"\n") + _fill(b"1,", n // 2, suffix=b"\n"), "columns"),
    "quoted-column-bomb": (lambda n: _fill(b'"a",', n, suffix=b"\n"), "longer than|columns"),
    "line-bomb": (lambda n: _fill(b"x", n, prefix=b"a,b\n", suffix=b"\n"), "longer than"),
    "huge-cell": (lambda n: _fill(b"x", n, prefix=b'a,b\n1,"', suffix=b'"\n'), "more than .* characters|longer than"),
    "multiline-cell": (lambda n: _fill(b"x\n", n, prefix=b'a,b\n1,"', suffix=b'"\n'),
                       "more than .* characters|longer than"),
    "multiline-record": (lambda n: _fill(b'"x\n",', n, prefix=b"a,b\n"), "longer than|more than"),
    "unclosed-quote-bomb": (lambda n: _fill(b"x,y\n", n, prefix=b'a,b\n1,"'), "longer than|more than|never closed"),
    "row-bomb": (lambda n: _fill(b"1,2\n", n, prefix=b"a,b\n"), "more than .* data rows"),
    "cell-count-bomb": (lambda n: _fill(b"1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0\n", n,
                                        prefix=",".join(f"c{i}" for i in range(20)).encode() + b"\n"),
                        "more than .* (data rows|values)"),
    "utf16-column-bomb": (lambda n: codecs.BOM_UTF16_LE + _fill("a,".encode("utf-16-le"), n - 2), "columns"),
    "binary": (lambda n: _fill(b"\x00\xff\x13\x37", n), "binary"),
}


def _rows(n: int = 30) -> str:
    return "\n".join(f"{i},{i % 3},{(i * 7) % 5}" for i in range(n))


#: Name → (file bytes, regex the message must match). Small malformed or hostile files.
MALFORMED: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "empty"),
    "binary": (b"PK\x03\x04\x00\x00\x00binary zip", "binary"),
    "png": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary|not readable"),
    "utf16-bom-no-data": ("a,b\n".encode("utf-16"), "at least|data row"),
    "one-column": (("value\n" + "\n".join(map(str, range(30)))).encode(), "Only one column"),
    "duplicate-names": (("x,x,y\n" + _rows()).encode(), "appears 2 times"),
    "blank-name": (("x,,y\n" + _rows()).encode(), "has no name"),
    "unclosed-quote": (('x,y,z\n1,"2,3\n' + _rows()).encode(), "never closed"),
    "ragged-long": (("x,y,z\n" + _rows(5) + "\n1,2,3,4\n" + _rows(5)).encode(), "do not line up"),
    "ragged-short": (("x,y,z\n" + _rows(5) + "\n1,2\n" + _rows(5)).encode(), "do not line up"),
    "text-after-quote": (('x,y,z\n1,"2"junk,3\n' + _rows()).encode(), "after a closing quote"),
    "inf": (("x,y,z\n" + _rows() + "\ninf,1,2\n").encode(), "not a finite number"),
    "nan": (("x,y,z\n" + _rows() + "\n1,NaN,2\n").encode(), "not a finite number"),
    "overflow": (("x,y,z\n" + _rows() + "\n1,2,1e309\n").encode(), "too large"),
    "no-header": (("1,2,3\n" + _rows()).encode(), "looks like data"),
    "long-name": (("x,y," + "z" * 5000 + "\n" + _rows()).encode(), "longer than"),
    "all-empty-column": (("x,y,z\n" + "\n".join(f"{i},{i},NA" for i in range(30))).encode(), "is empty"),
    "single-row": (b"x,y,z\n1,2,3\n", "at least"),
}

#: Files that parse (they are valid CSV) but carry hostile text: names and cells must stay inert.
INERT_TEXT = {
    "markdown-names": ("![x](http://attacker.invalid/img.png),[click](javascript:alert(1)),"
                       "<img src=x onerror=alert(1)>\n"
                       + _rows()).encode(),
    "formula-headers": ('=HYPERLINK("http://attacker.invalid"),+cmd,@SUM(A1)\n' + _rows()).encode(),
    "formula-cells": ("name,y,z\n" + "\n".join(f'"=HYPERLINK(""http://attacker.invalid"")",{i % 2},{i}'
                                                for i in range(30))).encode(),
    "bom": (codecs.BOM_UTF8 + ("x,y,z\n" + _rows()).encode()),
    "utf16": ("x\ty\tz\n" + _rows().replace(",", "\t")).encode("utf-16"),
    "utf16-no-bom": ("x,y,z\n" + _rows()).encode("utf-16-le"),
    "html-cells": ("name,y,z\n" + "\n".join(f"<script>alert({i})</script>,{i % 2},{i}" for i in range(30))).encode(),
}

#: Non-Latin CSV text (Greek, Chinese, mixed with Latin) for UTF-16 without a byte-order mark (issue 26 item 5):
#: most of its characters have no zero byte, so "a zero in every other byte" does not recognise it.
NON_LATIN_CSV = {
    "greek": "όνομα,ηλικία,πόλη\n" + "\n".join(f"Γιώργος {i},{20 + i % 50},Αθήνα" for i in range(40)) + "\n",
    "chinese": "姓名;年龄;城市\n" + "\n".join(f"张伟{i};{20 + i % 50};北京" for i in range(40)) + "\n",
    "mixed": "name\tστήλη\t列\n" + "\n".join(f"x{i}\t{i}\t上海 Ωmega" for i in range(40)) + "\n",
}

#: Strings an attacker puts into links or names: Markdown images/links, HTML, control characters.
INJECTIONS = (
    "![x](http://attacker.invalid/pixel.png)",
    "[click me](javascript:alert(1))",
    "<img src=http://attacker.invalid/x.png>",
    "<script>alert(1)</script>",
    "**bold** _it_ `code` # heading",
    "a\u202ebidi\u202c\x00\x1b[31m",
    "$$\\href{http://attacker.invalid}{x}$$",
    "=HYPERLINK(\"http://attacker.invalid\")",
)
