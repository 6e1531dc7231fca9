"""Giveaway words spelt to slip past a byte-wise check (issue 32): each is a lint finding that says
which written form matched which word, and the ordinary words around them stay clean."""

from __future__ import annotations

import pytest

from faultkit.catalog.rules.leakage import DEFAULT_WORDS, find_matches, joined_literals
from tests.factories import cart_prefix_entry, entry_data, write_entry
from tests.hostile.test_patches import HUNK

# (case, what the log message says, the word, what the finding says about the form)
FORMS = [
    ("fullwidth", "cart \uff46ault seen", "fault", "'\uff46ault' ('\\uff46ault') matches 'fault' after normalisation"),
    ("zero-width-space", "cart fa\u200bult seen", "fault", "'fa\\u200bult' ('fa\\u200bult') matches 'fault'"),
    ("soft-hyphen", "cart in\u00adject seen", "inject", "'in\\xadject' ('in\\xadject') matches 'inject'"),
    ("combining-mark", "cart cha\u0301os seen", "chaos", "matches 'chaos' after normalisation"),
    ("cyrillic", "cart f\u0430ult seen", "fault", "('f\\u0430ult') matches 'fault' after normalisation"),
    ("greek", "cart ch\u03b1\u03bfs seen", "chaos", "('ch\\u03b1\\u03bfs') matches 'chaos' after normalisation"),
    ("mixed-case", "cart FaUlT seen", "fault", "'FaUlT' matches 'fault' after normalisation"),
    ("mixed-case-bug", "cart bUG seen", "bug", "'bUG' matches 'bug' after normalisation"),
    ("injects", "it injects a pause", "inject", "'injects' is a form of 'inject'"),
    ("faulting", "cart faulting now", "fault", "'faulting' is a form of 'fault'"),
    ("bugfix", "cart bugfix pending", "bug", "'bugfix' begins with 'bug'"),
    ("faultinjection", "cart faultinjection on", "fault", "'faultinjection' begins with 'fault'"),
    ("chaosmonkey", "cart chaosmonkey on", "chaos", "'chaosmonkey' begins with 'chaos'"),
]


def test_every_spelling_of_a_giveaway_word_is_a_lint_finding(ws, run):
    for i, (_, message, _, _) in enumerate(FORMS):
        write_entry(ws, entry_data(id=f"ms-cart-form-{i}", log={"message": message, "service": "cart"}))
    proc = run("catalog", "lint")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    for i, (case, _, word, detail) in enumerate(FORMS):
        lines = [line for line in proc.stdout.splitlines()
                 if f"ms-cart-form-{i}.yaml" in line and "log.message" in line and "gives the fault away" in line]
        assert len(lines) == 1, (case, proc.stdout)
        assert f"{word!r} in the log message" in lines[0] and detail in lines[0], (case, lines[0])


@pytest.mark.parametrize("text", ["default_timeout = 3", "circuitBreaker.open()", "payment intent created",
                                  "debugging the cart", "set a breakpoint", "cart store request failed",
                                  "caf\u00e9 \u0433\u043e\u0442\u043e\u0432\u043e", "\uff21\uff22\uff23 ok"])
def test_ordinary_words_stay_clean(text):
    assert find_matches(text, DEFAULT_WORDS) == [] and find_matches(text, DEFAULT_WORDS, code=True) == []


def lint_patch(ws, run, extra: str):  # type: ignore[no-untyped-def]
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(HUNK + extra)
    write_entry(ws, {k: v for k, v in cart_prefix_entry().items() if v is not None})
    proc = run("catalog", "lint")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    return [line for line in proc.stdout.splitlines() if "code.patch" in line and "gives the fault away" in line]


def test_a_giveaway_folder_name_in_the_patch_is_found(ws, run):
    lines = lint_patch(ws, run, """\
diff --git a/src/cart/chaos/helper.py b/src/cart/chaos/helper.py
new file mode 100644
index 0000000..1234567
--- /dev/null
+++ b/src/cart/chaos/helper.py
@@ -0,0 +1 @@
+PAUSE_S = 0.2
""")
    assert len(lines) == 1, lines
    assert "'chaos' in a file name of the patch gives the fault away (the name 'chaos'): 'src/cart/chaos/helper.py'" \
        in lines[0]


@pytest.mark.parametrize("source,joined", [
    ('+MODE = "fa" "ult"\n', "fault"),
    ('+MODE = "in" + "ject"\n', "inject"),
    ("+MODE = ('cha'\n+        'os')\n", "chaos"),
])
def test_adjacent_string_literals_are_read_joined(ws, run, source, joined):
    lines_added = source.count("\n")
    lines = lint_patch(ws, run, f"""\
diff --git a/src/cart/mode.py b/src/cart/mode.py
new file mode 100644
index 0000000..1234567
--- /dev/null
+++ b/src/cart/mode.py
@@ -0,0 +1,{lines_added} @@
{source}""")
    assert len(lines) == 1, lines
    assert f"{joined!r} in a line the patch adds gives the fault away (adjacent string literals join into " \
        f"{joined!r})" in lines[0], lines[0]


def test_literals_apart_are_not_joined():
    assert joined_literals('a = "fa"\nb = "ult"') == []
    assert joined_literals('call("fa", "ult")') == []
    assert joined_literals('x = "fa" "ult" + "s"') == ["faults"]
