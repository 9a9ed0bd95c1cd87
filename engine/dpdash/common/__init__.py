"""dpdash.common: helpers every wing uses. Imports no other wing.

Contents
--------
formatting    numbers as the pages print them (``number``, ``number_down``, ``percent``, ``power_of_ten``)
validation    argument checks that name the parameter (``ValidationError``, ``check_epsilon``, ``check_delta``,
              ``as_generator``)
view          the tab-view types every results tab returns (``TabView``, ``Headline``, ``Sentence``,
              ``ReportSection``)
parallel      the engine's one fan-out helper (``map_ordered``, ``imap_unordered``, ``spawn_seeds``; one task in a
              worker of its own: ``run_in_worker``; a CPU budget over a block of fan-outs: ``cpu_budget``)
ledger        the privacy ledger every release writes to (``Ledger``, ``Spend``, ``record``)
data          bundled datasets and the bounded CSV reader (``load_dataset``, ``read_uploaded_csv``,
              ``census_population``)
search        bounded integer and root searches (``smallest_true``, ``bracketed_root``)
palette       the product's colour palette (``PALETTE``); figure_marks: cheap reference lines on figures
paths         where the bundled datasets are (``DATA_DIR``); script: the header of every "Copy as code" script
version       ``__version__``
"""

from dpdash.common.data import census_population, load_dataset, read_uploaded_csv
from dpdash.common.formatting import number, number_down, percent
from dpdash.common.ledger import Ledger, Spend
from dpdash.common.palette import PALETTE
from dpdash.common.parallel import map_ordered, spawn_seeds
from dpdash.common.validation import ValidationError
from dpdash.common.view import Headline, ReportSection, Sentence, TabView

__all__ = ["census_population", "load_dataset", "read_uploaded_csv", "number", "number_down", "percent", "Ledger",
           "Spend", "PALETTE", "map_ordered", "spawn_seeds", "ValidationError", "Headline", "ReportSection",
           "Sentence", "TabView"]
