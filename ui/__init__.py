"""Small Streamlit helpers shared by the pages (the engine never imports this package)."""

from ui.common import active_dataset, load_active_dataset, page_end, page_setup

__all__ = ["active_dataset", "load_active_dataset", "page_end", "page_setup"]
