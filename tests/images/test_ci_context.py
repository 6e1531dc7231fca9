"""The in-image CI's context, read back from its tar: what a package-named service folder gets."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from faultkit.images.ci import TOOLS_DIR, ci_context, package_name


def _members(ctx: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(ctx)) as tar:
        return {m.name: m for m in tar.getmembers()}


def _dockerfile(ctx: bytes) -> str:
    with tarfile.open(fileobj=io.BytesIO(ctx)) as tar:
        f = tar.extractfile("Dockerfile")
        assert f is not None
        return f.read().decode()


def test_a_package_folder_is_linked_by_its_name_beside_the_working_folder(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text("")
    files = [("__init__.py", init)]
    assert package_name("src/accounts/contacts", files) == "contacts"
    ctx = ci_context(files, "sha256:abc", "/app", (), ("python3", "-m", "pytest"), "contacts")
    link = _members(ctx)["packages/contacts"]
    assert link.issym() and link.linkname == "/app"
    text = _dockerfile(ctx)
    assert "COPY packages/ /\n" in text  # /contacts -> /app, where pytest looks above /app/tests
    assert f"ENV PYTHONPATH={TOOLS_DIR}${{PYTHONPATH:+:$PYTHONPATH}}" in text
    deeper = ci_context(files, "sha256:abc", "/srv/app/", (), ("pytest",), "contacts")
    assert _members(deeper)["packages/contacts"].linkname == "/srv/app"
    assert "COPY packages/ /srv/\n" in _dockerfile(deeper)


def test_no_link_without_a_package_or_for_a_standard_module_name(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text("")
    main = tmp_path / "main.py"
    main.write_text("")
    assert package_name("src/cart", [("main.py", main)]) is None  # not a package
    assert package_name("src/email", [("__init__.py", init)]) is None  # would hide the standard email
    assert package_name("src/user-service", [("__init__.py", init)]) is None  # not importable by name
    ctx = ci_context([("main.py", main)], "sha256:abc", "/app", (), ("pytest",))
    assert not any(name.startswith("packages") for name in _members(ctx))
    at_root = ci_context([("__init__.py", init)], "sha256:abc", "/", (), ("pytest",), "contacts")
    assert not any(name.startswith("packages") for name in _members(at_root))  # no folder to link beside
    assert f"ENV PYTHONPATH={TOOLS_DIR}${{PYTHONPATH:+:$PYTHONPATH}}" in _dockerfile(ctx)
