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
    "blank-name": (("x,,y\n" + _rows()).encode(), "has no name"),  # a middle column, holding no row numbers
    "unclosed-quote": (('x,y,z\n1,"2,3\n' + _rows()).encode(), "never closed"),
    "ragged-long": (("x,y,z\n" + _rows(5) + "\n1,2,3,4\n" + _rows(5)).encode(), "do not line up"),
    "ragged-short": (("x,y,z\n" + _rows(5) + "\n1,2\n" + _rows(5)).encode(), "do not line up"),
    "text-after-quote": (('x,y,z\n1,"2"junk,3\n' + _rows()).encode(), "after a closing quote"),
    "inf": (("x,y,z\n" + _rows() + "\ninf,1,2\n").encode(), "not a finite number"),
    "minus-inf": (("x,y,z\n" + _rows() + "\n1,-Infinity,2\n").encode(), "not a finite number"),
    "overflow": (("x,y,z\n" + _rows() + "\n1,2,1e309\n").encode(), "too large"),
    "no-header": (("1,2,3\n" + _rows()).encode(), "looks like data"),
    "long-name": (("x,y," + "z" * 5000 + "\n" + _rows()).encode(), "longer than"),
    "all-empty-column": (("x,y,z\n" + "\n".join(f"{i},{i}," for i in range(30))).encode(), "is empty"),
    "beyond-2**53": (("x,y,z\n" + _rows() + "\n1,2,9007199254740993\n").encode(),
                     "too large to hold exactly \\(line 32: 9007199254740993\\)"),
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


# --------------------------------------------------------------------------- files as users write them (issue 31)
def _people(n: int, seed: int):
    """Rows of an Arrests-like table (carData::Arrests columns), seeded: released, colour, year, age, sex, employed,
    citizen, checks (checks missing on every 9th row, as R writes NA)."""
    import random

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        rows.append(dict(released=rng.choice(["Yes"] * 5 + ["No"]), colour=rng.choice(["White", "White", "Black"]),
                         year=rng.randint(1997, 2002), age=rng.randint(12, 66),
                         sex=rng.choice(["Male"] * 9 + ["Female"]),
                         employed=rng.choice(["Yes", "No"]), citizen=rng.choice(["Yes"] * 4 + ["No"]),
                         checks=None if i % 9 == 4 else rng.randint(0, 6)))
    return rows


def _wages(n: int, seed: int):
    """Rows of a Wage-like table (ISLR::Wage): year, age, maritl, race, education, region, health, wage, logwage."""
    import math
    import random

    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        wage = round(math.exp(rng.gauss(4.65, 0.35)), 6)
        rows.append(dict(year=rng.randint(2003, 2009), age=rng.randint(18, 80),
                         maritl=rng.choice(["1. Never Married", "2. Married", "4. Divorced"]),
                         race=rng.choice(["1. White", "2. Black", "3. Asian"]),
                         education=rng.choice(["1. < HS Grad", "2. HS Grad", "4. College Grad"]),
                         region="2. Middle Atlantic", health=rng.choice(["1. <=Good", "2. >=Very Good"]),
                         logwage=round(math.log(wage), 6), wage=wage))
    return rows


def _r_cell(v) -> str:
    """A cell as R's write.csv writes it: text quoted, NA for missing, numbers bare."""
    if v is None:
        return "NA"
    return f'"{v}"' if isinstance(v, str) else str(v)


def r_write_csv(rows: list[dict], rownames: list | None = None) -> bytes:
    """R's ``write.csv(df)``: a first column named "" with the row names ("1", "2", … or text), quoted text."""
    cols = list(rows[0])
    names = rownames or [str(i + 1) for i in range(len(rows))]
    lines = [",".join(['""', *(f'"{c}"' for c in cols)])]
    lines += [",".join([f'"{nm}"', *(_r_cell(r[c]) for c in cols)]) for nm, r in zip(names, rows)]
    return ("\n".join(lines) + "\n").encode()


def rdatasets_csv(rows: list[dict], rownames: list) -> bytes:
    """An Rdatasets CSV (as the issue's Wage and SLID came): a first column "rownames", then the data."""
    cols = list(rows[0])
    lines = [",".join(['"rownames"', *(f'"{c}"' for c in cols)])]
    lines += [",".join([str(nm), *(_r_cell(r[c]) for c in cols)]) for nm, r in zip(rownames, rows)]
    return ("\n".join(lines) + "\n").encode()


def pandas_to_csv(rows: list[dict]) -> bytes:
    """pandas' ``DataFrame.to_csv()`` with its index: an unnamed first column 0…n−1, blank for missing."""
    import pandas as pd

    return pd.DataFrame(rows).to_csv().encode()


def excel_csv(rows: list[dict]) -> bytes:
    """Excel's "CSV UTF-8" in a European locale: a BOM, ``;`` between values, CRLF line ends, blank for missing."""
    cols = list(rows[0])
    lines = [";".join(cols)] + [";".join("" if r[c] is None else str(r[c]) for c in cols) for r in rows]
    return b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n"


def notepad_csv(rows: list[dict]) -> bytes:
    """A CSV typed or saved in Notepad as "UTF-8 with BOM": commas, CRLF, blank for missing."""
    cols = list(rows[0])
    lines = [",".join(cols)] + [",".join("" if r[c] is None else str(r[c]) for c in cols) for r in rows]
    return b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n"


def latin1_csv(rows: list[dict]) -> bytes:
    """An older Excel or R export in Latin-1 (Windows-1252 for these letters), with accented names and values."""
    cols = ["âge" if c == "age" else c for c in rows[0]]
    lines = [",".join(cols)] + [",".join("" if v is None else str(v).replace("White", "Blanc é")
                                         for v in r.values()) for r in rows]
    return ("\n".join(lines) + "\n").encode("latin-1")


def user_files() -> dict[str, tuple[bytes, dict]]:
    """Name → (file bytes, what a careful reader finds): ``row_labels`` (how many columns are row labels),
    ``columns`` (the data columns, in order), ``numeric`` (columns read as numbers), ``missing`` (column → count of
    missing cells), ``note`` (a word a note must contain), ``label`` (a yes/no column), ``value`` (the columns a
    Mean view may start from).
    """
    arrests = _people(400, 31)
    arrest_cols = list(arrests[0])
    checks_missing = sum(r["checks"] is None for r in arrests)
    wage = _wages(300, 31)
    wage_ids = [231655 + 7919 * i % 450000 for i in range(300)]  # ISLR's rownames: survey ids, not 1…n
    slid = [dict(wages=None if i % 3 == 0 else round(8 + (i * 37 % 200) / 10, 2),
                 education=None if i % 11 == 0 else 10 + i % 9, age=16 + i % 50,
                 sex=["Male", "Female"][i % 2], language=["English", "French", "Other"][i % 3]) for i in range(240)]
    regions = [dict(region=["N", "S", "NA", "None"][i % 4], size=10 + i % 7, answer=["Yes", "No"][i % 2])
               for i in range(40)]
    return {
        "r-write-csv": (r_write_csv(arrests), dict(
            row_labels=1, columns=arrest_cols, numeric={"year", "age", "checks"},
            missing={"checks": checks_missing}, note="NA", label="released")),
        "r-write-csv-text-rownames": (r_write_csv(arrests[:60], [f"case {i:03d}" for i in range(60)]), dict(
            row_labels=1, columns=arrest_cols, numeric={"year", "age", "checks"})),
        "rdatasets-wage": (rdatasets_csv(wage, wage_ids), dict(
            row_labels=1, columns=list(wage[0]), numeric={"year", "age", "logwage", "wage"},
            value={"wage", "logwage"})),
        "rdatasets-slid": (rdatasets_csv(slid, list(range(1, 241))), dict(
            row_labels=1, columns=list(slid[0]), numeric={"wages", "education", "age"},
            missing={"wages": 80, "education": 22}, value={"wages", "age"})),
        "pandas-to-csv-index": (pandas_to_csv(regions), dict(
            row_labels=1, columns=["region", "size", "answer"], numeric={"size"}, missing={"region": 0},
            label="answer")),
        "excel-bom-semicolon-crlf": (excel_csv(arrests), dict(
            row_labels=0, columns=arrest_cols, numeric={"year", "age", "checks"},
            missing={"checks": checks_missing}, label="released")),
        "notepad-utf8-bom": (notepad_csv(regions), dict(
            row_labels=0, columns=["region", "size", "answer"], numeric={"size"}, missing={"region": 0},
            label="answer")),
        "latin1": (latin1_csv(arrests), dict(
            row_labels=0, columns=["released", "colour", "year", "âge", "sex", "employed", "citizen", "checks"],
            numeric={"year", "âge", "checks"}, missing={"checks": checks_missing}, note="Latin-1",
            label="released")),
    }
