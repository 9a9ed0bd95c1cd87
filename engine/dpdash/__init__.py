"""dpdash: the privacy/utility explorer's engine (formulas, mechanisms, tab views, verdicts, figure builders).

Pure Python: it never imports streamlit, so ``pip install`` of this repository gives a package that the "Copy as
code" scripts, notebooks and other programs import as ``dpdash``. The Streamlit app (``app.py``, ``pages/``, ``ui/``)
runs from a checkout.
"""

__version__ = "0.27.0"
