"""Multi-select controls with short option tokens in links (issue 14 item 4): ``ui.widgets.multi_choice``.

Pure checks of the link codec first (tokens, display labels, older repeated parameters, order, repeats, unknown
items), then a small AppTest page: the default is not written, a choice writes comma-separated tokens, the written
link restores the same choice, and every unknown item is named in the link notice while the known ones are kept.
Expected values are written out by hand (the URL text a user would see), not computed by the code under test.
"""

import pytest
from streamlit.testing.v1 import AppTest

from ui.widgets import multi_choice, tokens_from_link, unknown_items_reason

OPTS = {"srswor": "without replacement", "poisson": "Poisson", "srswr": "with replacement",
        "odd": "Neyman, take-all"}   # a label with a comma: older links wrote labels whole

PAGE = """
import streamlit as st
from ui.common import page_setup, page_end
from ui.widgets import multi_choice
page_setup("Multi-choice test")
a = multi_choice("Schemes", {"srswor": "without replacement", "poisson": "Poisson", "srswr": "with replacement"},
                 key="sch", default=["srswor", "poisson"])
b = multi_choice("Methods", {"neyman": "Neyman (take-all)", "proportional": "proportional",
                             "privacy_aware": "privacy-aware (derived)"}, key="meth")
st.write("OUT=" + "|".join(a) + ";" + "|".join(b))
page_end()
"""


@pytest.mark.parametrize("values, picked, unknown", [
    (["srswor,poisson"], ["srswor", "poisson"], []),                     # what multi_choice writes
    (["poisson,srswor"], ["poisson", "srswor"], []),                     # the link's order is kept
    (["SRSWOR", "Poisson"], ["srswor", "poisson"], []),                  # older links: repeated, old labels
    (["with replacement", "without replacement"], ["srswr", "srswor"], []),   # current labels
    ([" Poisson , SRSWR "], ["poisson", "srswr"], []),                   # spaces and case ignored
    (["poisson,poisson,srswor,POISSON"], ["poisson", "srswor"], []),     # repeats dropped, first place kept
    (["Neyman, take-all"], ["odd"], []),                                 # a whole label with a comma
    (["odd,Neyman"], ["odd"], ["Neyman"]),
    ([""], [], []),                                                      # an empty value: nothing chosen
    (["srswor,,"], ["srswor"], []),                                      # empty items skipped
    (["srswor,bogus,x,bogus"], ["srswor"], ["bogus", "x"]),             # each unknown item named once
    (["bogus"], [], ["bogus"]),
])
def test_tokens_from_link_reads_tokens_and_labels_and_lists_the_rest(values, picked, unknown):
    assert tokens_from_link(values, OPTS) == (picked, unknown)


def test_unknown_items_reason_names_each_item_escaped():
    assert unknown_items_reason(["bogus"], kept=True) == "“bogus” is not an option; the other items were used"
    assert unknown_items_reason(["a", "b"], kept=False) == "“a”, “b” are not options; the default is used"
    text = unknown_items_reason(["![x](http://evil.example/p)"], kept=True)
    assert "](http" not in text and "\\!\\[x\\]" in text
    many = unknown_items_reason([f"u{i}" for i in range(8)], kept=True)
    assert "“u4”" in many and "“u5”" not in many and "and 3 more" in many


def _run(**params):
    at = AppTest.from_string(PAGE, default_timeout=30)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _out(at):
    return next(m.value for m in at.markdown if m.value.startswith("OUT="))


def _notice(at):
    return " ".join(t.value for t in at.toast)


def _link(at):
    """The link as the browser would hold it: name → its one value."""
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in dict(at.query_params).items()}


def test_default_is_not_written_and_a_choice_writes_comma_separated_tokens():
    at = _run()
    assert _out(at) == "OUT=srswor|poisson;neyman|proportional|privacy_aware" and _link(at) == {}
    at.multiselect(key="sch").set_value(["srswr", "srswor"]).run()
    at.multiselect(key="meth").set_value(["privacy_aware"]).run()
    assert _out(at) == "OUT=srswr|srswor;privacy_aware"
    assert _link(at) == {"sch": "srswr,srswor", "meth": "privacy_aware"}
    at.multiselect(key="sch").set_value(["srswor", "poisson"]).run()   # back to the default: the link drops it
    assert _link(at) == {"meth": "privacy_aware"}
    at.multiselect(key="meth").set_value([]).run()                     # an empty choice is a setting too
    assert _out(at) == "OUT=srswor|poisson;" and _link(at) == {"meth": ""}


@pytest.mark.parametrize("sch, meth", [(["srswr", "srswor"], ["privacy_aware", "neyman"]), (["poisson"], []),
                                       ([], ["proportional"])])
def test_the_written_link_restores_exactly(sch, meth):
    at = _run()
    at.multiselect(key="sch").set_value(sch).run()
    at.multiselect(key="meth").set_value(meth).run()
    again = _run(**_link(at))
    assert _out(again) == "OUT=" + "|".join(sch) + ";" + "|".join(meth) and not _notice(again)
    assert again.multiselect(key="sch").value == sch and again.multiselect(key="meth").value == meth
    assert _link(again) == _link(at)


def test_older_links_with_labels_are_accepted_and_rewritten_as_tokens():
    at = _run(sch=["SRSWOR", "SRSWR"], meth=["Neyman (take-all)", "privacy-aware (derived)"])
    assert _out(at) == "OUT=srswor|srswr;neyman|privacy_aware" and not _notice(at)
    assert _link(at) == {"sch": "srswor,srswr", "meth": "neyman,privacy_aware"}
    at = _run(sch="Poisson,with replacement", meth="proportional")
    assert _out(at) == "OUT=poisson|srswr;proportional" and _link(at) == {"sch": "poisson,srswr",
                                                                          "meth": "proportional"}


def test_a_link_naming_the_default_stays_short():
    at = _run(sch="SRSWOR,Poisson", meth="neyman,proportional,privacy_aware")
    assert _out(at) == "OUT=srswor|poisson;neyman|proportional|privacy_aware" and _link(at) == {}
    assert not _notice(at)


def test_unknown_items_are_named_and_the_known_ones_kept():
    at = _run(sch="srswr,bogus,Poisson", meth="Neyman (take-all),![x](http://evil.example/p)")
    assert _out(at) == "OUT=srswr|poisson;neyman"
    notice = _notice(at).replace("\u2060", "")  # md_escape breaks autolinks with a word joiner (issue 26)
    assert "**sch** (“bogus” is not an option; the other items were used)" in notice
    assert "**meth** (“\\!\\[x\\]\\(http\\://evil\\.example/p\\)” is not an option" in notice
    assert "](http" not in notice
    assert _link(at) == {"sch": "srswr,poisson", "meth": "neyman"}


def test_a_link_with_no_known_item_keeps_the_default_and_says_so():
    at = _run(sch="bogus,nope")
    assert _out(at) == "OUT=srswor|poisson;neyman|proportional|privacy_aware" and _link(at) == {}
    assert "**sch** (“bogus”, “nope” are not options; the default is used)" in _notice(at)


def test_a_choice_survives_reruns_and_a_new_link_is_read():
    at = _run(sch="srswr")
    at.multiselect(key="sch").set_value(["poisson"]).run()
    at.run()   # a rerun from the browser's URL (which holds what the control wrote) keeps the choice
    assert _out(at).startswith("OUT=poisson;") and _link(at) == {"sch": "poisson"}
    at.query_params["sch"] = "srswor,srswr"   # a new link in the same session (restored settings, page switch)
    at.run()
    assert _out(at).startswith("OUT=srswor|srswr;")


def test_tokens_with_commas_are_refused():
    # checked before any Streamlit call: a token with a comma could not be read back from the link
    with pytest.raises(ValueError, match="comma"):
        multi_choice("X", {"a,b": "A and B"}, key="x")



HIDING = """
import streamlit as st
from ui.common import page_setup, page_end
from ui.widgets import multi_choice
page_setup("Hidden multi-choice")
if st.toggle("Show", value=True, key="show"):
    a = multi_choice("Schemes", {"srswor": "without replacement", "poisson": "Poisson", "srswr": "with replacement"},
                     key="sch", default=["srswor", "poisson"])
    st.write("OUT=" + "|".join(a))
page_end()
"""


def test_a_value_dropped_from_the_session_is_read_again_from_the_link():
    # Streamlit forgets a control's value when a run does not draw it (and restoring saved settings drops it):
    # the link, which still holds it, must give it back, not the default
    at = AppTest.from_string(HIDING, default_timeout=30)
    at.query_params["sch"] = "srswr"
    at.run()
    at.multiselect(key="sch").set_value(["poisson", "srswr"]).run()
    assert _out(at) == "OUT=poisson|srswr"
    at.toggle(key="show").set_value(False).run()
    at.toggle(key="show").set_value(True).run()
    assert not at.exception and _out(at) == "OUT=poisson|srswr" and not _notice(at)
