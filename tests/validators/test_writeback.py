"""Writing a verdict into its entry file edits only the `validation:` block."""

from __future__ import annotations

import yaml

from faultkit.catalog.writeback import replace_validation

ENTRY = """# a comment the author wrote
id: t-fault
validation:
  verdict: rejected
  failed_rules:
  - screening

title: Cart store port   # kept as written
"""


def test_the_validation_block_is_replaced_and_the_rest_kept_as_written():
    record = {"verdict": "admitted", "bundle_digest": "sha256:ab", "window_s": 5.0, "repeat": 2}
    text = replace_validation(ENTRY, record)
    assert text.startswith("# a comment the author wrote\nid: t-fault\ntitle: Cart store port   # kept as written\n")
    assert yaml.safe_load(text)["validation"] == record
    assert replace_validation(text, record) == text  # writing the same record twice changes nothing


def test_an_entry_without_a_validation_block_gets_one_at_the_end():
    text = replace_validation("id: t-fault\ntitle: x\n\n\n", {"verdict": "flaky"})
    assert text == "id: t-fault\ntitle: x\nvalidation:\n  verdict: flaky\n"
