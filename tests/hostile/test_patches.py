"""A code fault's patch may only modify or add regular files under the target's source folder."""

from __future__ import annotations

import pytest

from tests.factories import cart_prefix_entry, write_entry

HUNK = """\
diff --git a/src/cart/main.py b/src/cart/main.py
--- a/src/cart/main.py
+++ b/src/cart/main.py
@@ -10,3 +10,4 @@
\x20
 SERVICE = "cart"
 MAX_QUANTITY = 999
+_LEGACY_PREFIX = "cart-v2:"
"""

CASES = [
    ("rename-in-from-another-service", """\
diff --git a/src/payment/main.py b/src/cart/payment.py
similarity index 100%
rename from src/payment/main.py
rename to src/cart/payment.py
""", "renames a file"),
    ("rename-inside", """\
diff --git a/src/cart/main.py b/src/cart/main2.py
similarity index 100%
rename from src/cart/main.py
rename to src/cart/main2.py
""", "renames a file"),
    ("copy", """\
diff --git a/src/payment/main.py b/src/cart/copy.py
similarity index 100%
copy from src/payment/main.py
copy to src/cart/copy.py
""", "copies a file"),
    ("new-symlink-out", """\
diff --git a/src/cart/link.py b/src/cart/link.py
new file mode 120000
index 0000000..1111111
--- /dev/null
+++ b/src/cart/link.py
@@ -0,0 +1 @@
+../../../../../etc/passwd
\\ No newline at end of file
""", "symlink"),
    ("mode-to-executable", """\
diff --git a/src/cart/main.py b/src/cart/main.py
old mode 100644
new mode 100755
""", "makes a file executable"),
    ("new-executable-file", """\
diff --git a/src/cart/run.sh b/src/cart/run.sh
new file mode 100755
index 0000000..1111111
--- /dev/null
+++ b/src/cart/run.sh
@@ -0,0 +1 @@
+echo hi
""", "makes a file executable"),
    ("binary", """\
diff --git a/src/cart/blob.bin b/src/cart/blob.bin
new file mode 100644
index 0000000..1111111
GIT binary patch
literal 3
KcmZ?wbY%bm0{{R3

literal 0
HcmV?d00001

""", "binary change"),
    ("binary-files-differ", """\
diff --git a/src/cart/blob.bin b/src/cart/blob.bin
index 1111111..2222222 100644
Binary files a/src/cart/blob.bin and b/src/cart/blob.bin differ
""", "binary change"),
    ("delete-outside", """\
diff --git a/src/payment/main.py b/src/payment/main.py
deleted file mode 100644
index 1111111..0000000
--- a/src/payment/main.py
+++ /dev/null
@@ -1 +0,0 @@
-x = 1
""", "outside src/cart"),
    ("dotdot-path", """\
--- a/src/cart/../payment/main.py
+++ b/src/cart/../payment/main.py
@@ -1 +1 @@
-x = 1
+x = 2
""", "outside src/cart"),
    ("absolute-path", """\
--- /etc/passwd
+++ /etc/passwd
@@ -1 +1 @@
-root
+toor
""", "outside src/cart"),
    ("git-header-elsewhere", """\
diff --git a/src/payment/main.py b/src/payment/main.py
--- a/src/payment/main.py
+++ b/src/payment/main.py
@@ -1 +1 @@
-x = 1
+x = 2
""", "outside src/cart"),
]


@pytest.mark.parametrize("name,extra,needle", CASES, ids=[c[0] for c in CASES])
def test_patch_reaching_past_its_service_is_refused(ws, run, name, extra, needle):
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(HUNK + extra)
    write_entry(ws, {k: v for k, v in cart_prefix_entry().items() if v is not None})
    proc = run("catalog", "lint")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "code.patch" in line and needle in line]
    assert lines, proc.stdout


def test_the_plain_patch_lints_clean(ws, run):
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(HUNK)
    write_entry(ws, {k: v for k, v in cart_prefix_entry().items() if v is not None})
    proc = run("catalog", "lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
