"""Whole tab views that a page hosts: one module per view, each rendering one ``@st.fragment``.

- :mod:`ui.views.public_information`: Tab 9 of the epsilon calculator (keys ``pi_*``);
- :mod:`ui.views.partially_private`: third mode of the stratified synthesis viewer (keys ``pp_*``);
- :mod:`ui.views.ppd_jobs`: their plain logic (no Streamlit): job units and cache keys of the WEM scheduler,
  the Algorithm 1 toy's parser, the loss table and the export shape, tested in ``tests/test_ppd_jobs.py``.
"""
