"""Product walks: random walks over each page's controls with independent oracles (issue 12).

Like the other whole-page layers they are not traced for coverage (``tests/conftest.py`` ``UNTRACED``).
"""
