"""Whole tab views that a page hosts: one module per view, each rendering one ``@st.fragment``.

- :mod:`ui.views.eps_noise`, ``eps_composition``, ``eps_budget``, ``eps_adaptive``, ``eps_risk``, ``eps_widths``,
  ``eps_tests``, ``eps_maxinfo``: Tabs 1–8 of the epsilon calculator, each drawing one view of
  ``dpdash.epsilon.views``; ``eps_common``: their shared defaults, link tables and report call;
- :mod:`ui.views.public_information`: Tab 9 of the epsilon calculator (keys ``pi_*``);
- :mod:`ui.views.partially_private`: third mode of the stratified synthesis viewer (keys ``pp_*``);
- :mod:`ui.views.ppd_jobs`: their plain logic (no Streamlit): job units and cache keys of the WEM scheduler,
  the Algorithm 1 toy's parser, the loss table and the export shape, tested in ``tests/ui/test_ppd_jobs.py``.
"""
