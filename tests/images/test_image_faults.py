"""A code fault in an image: the shipped catalog's patch builds a checkout image that holds the
marker (and the unpatched one does not); a patch that fails the service's tests, or an image name
that gives a fault away, is refused and leaves no image behind."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from faultkit.apps.descriptor import AppDescriptor
from faultkit.errors import InputError
from faultkit.images import CheckFailed, find_text, naming
from faultkit.images.app_images import build_app_images
from faultkit.images.records import ImageBuild
from faultkit.images.service import build_service
from faultkit.workspace import Workspace

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]

FAULT = "minishop-code-checkout-shipping-quote"


def _images(c: Any, app: AppDescriptor, service: str) -> set[str]:
    return {i.id for i in c.images.list(filters=naming.service_filter(app, service))}


def test_the_patched_checkout_image_holds_the_marker(release: dict[str, ImageBuild], repo_ws: Workspace,
                                                     minishop: AppDescriptor, docker_client: Any) -> None:
    plain = release["checkout"]
    assert find_text(docker_client, plain.id, "conversion") == ()
    # The engine outlives a run: a patched checkout that another test built for a cluster validation
    # of this fault (and left for the nodes) would be an earlier image holding the marker. Gone first,
    # so what is checked is this build against the unpatched images.
    for earlier in _images(docker_client, minishop, "checkout") - {plain.id}:
        if find_text(docker_client, earlier, "conversion"):
            docker_client.images.remove(earlier, force=True)
    out = build_app_images(repo_ws, "minishop", fault_id=FAULT, client=docker_client)
    try:
        (patched,) = out.builds
        assert patched.service == "checkout" and patched.id != plain.id and patched.ci == "passed"
        assert out.marker is not None and out.marker.ok
        assert out.marker.found_in == ("/app/main.py",)
        assert plain.id in out.marker.earlier and out.marker.earlier_with_marker == {}
        # nothing the engine shows about the image names the fault
        image = docker_client.images.get(patched.id)
        said = [*image.tags, *image.labels.values(), *(h.get("CreatedBy", "") for h in
                                                       docker_client.api.history(patched.id))]
        assert not [s for s in said if FAULT in s or "shipping-quote" in s]
    finally:
        docker_client.images.remove(out.builds[0].id)


def _host_failures(folder: Path) -> list[str]:
    """The failing tests as the service's own test command sees them on this machine."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=folder,
                          capture_output=True, text=True)
    return re.findall(r"^FAILED (\S+)", done.stdout, re.MULTILINE)


def test_a_change_failing_the_unit_tests_is_rejected_with_the_test_named(
        release: dict[str, ImageBuild], repo_ws: Workspace, minishop: AppDescriptor, docker_client: Any,
        src_copy: Path) -> None:
    main_py = src_copy / "checkout" / "main.py"
    text = main_py.read_text()
    assert "    return add_money(total, shipping)\n" in text
    main_py.write_text(text.replace("    return add_money(total, shipping)\n", "    return total\n"))
    expected = _host_failures(src_copy / "checkout")
    assert "tests/test_checkout.py::test_compute_total" in expected
    known = _images(docker_client, minishop, "checkout")
    with pytest.raises(CheckFailed) as caught:
        build_service(repo_ws, minishop, "checkout", source_root=src_copy, client=docker_client)
    assert caught.value.what == "unit tests"
    assert sorted(caught.value.failing) == sorted(expected)
    assert "tests/test_checkout.py::test_compute_total" in str(caught.value)
    assert _images(docker_client, minishop, "checkout") == known  # the rejected image is gone


def test_a_change_failing_lint_is_rejected(repo_ws: Workspace, minishop: AppDescriptor, docker_client: Any,
                                           src_copy: Path, release: dict[str, ImageBuild]) -> None:
    main_py = src_copy / "payment" / "main.py"
    main_py.write_text("import os  # unused\n" + main_py.read_text())
    known = _images(docker_client, minishop, "payment")
    with pytest.raises(CheckFailed) as caught:
        build_service(repo_ws, minishop, "payment", source_root=src_copy, client=docker_client)
    assert caught.value.what == "lint" and "F401" in caught.value.output
    assert _images(docker_client, minishop, "payment") == known


@pytest.mark.parametrize("tag, labels, word", [
    ("minishop/checkout:1.0.0-chaos", None, "chaos"),
    (None, {"org.opencontainers.image.description": "checkout with a broken quote"}, "broken"),
    ("minishop/checkout:faulty-build", None, "faulty"),
])
def test_a_giveaway_word_in_a_tag_or_label_is_refused(repo_ws: Workspace, minishop: AppDescriptor,
                                                     docker_client: Any, tag: str | None,
                                                     labels: dict[str, str] | None, word: str) -> None:
    known = _images(docker_client, minishop, "checkout")
    with pytest.raises(InputError, match=f"'{word}'.*gives the fault away"):
        build_service(repo_ws, minishop, "checkout", tag=tag, labels=labels, client=docker_client)
    assert _images(docker_client, minishop, "checkout") == known


def test_the_fault_id_in_a_tag_is_refused(repo_ws: Workspace, minishop: AppDescriptor, docker_client: Any) -> None:
    with pytest.raises(InputError, match="names the fault"):
        build_service(repo_ws, minishop, "checkout", tag=f"minishop/checkout:{FAULT}", fault_id=FAULT,
                      client=docker_client)


def test_a_giveaway_file_name_is_refused(repo_ws: Workspace, minishop: AppDescriptor, docker_client: Any,
                                        src_copy: Path) -> None:
    (src_copy / "checkout" / "inject_delay.py").write_text("DELAY = 1\n")
    with pytest.raises(InputError, match="file inject_delay.py.*'inject'"):
        build_service(repo_ws, minishop, "checkout", source_root=src_copy, client=docker_client)


def test_a_fault_of_another_kind_or_app_is_refused(repo_ws: Workspace, docker_client: Any) -> None:
    with pytest.raises(InputError, match="has no patch"):
        build_app_images(repo_ws, "minishop", fault_id="minishop-checkout-env-payment-addr-port", client=docker_client)
    with pytest.raises(InputError, match="no such entry"):
        build_app_images(repo_ws, "minishop", fault_id="minishop-no-such-thing", client=docker_client)
