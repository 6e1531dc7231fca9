"""The platform seam (issue 29): one status record and JSON shape, one factory, one option group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faultkit.errors import UsageError
from faultkit.platforms import KubernetesOptions, LocalOptions, open_platform, options_class, platform_flag
from faultkit.platforms.base import AppStatus, Instance, Platform, ServiceState, SiteState
from faultkit.platforms.local import LocalPlatform
from faultkit.platforms.local.status import SupervisorStatus, typed_status
from faultkit.workspace import Workspace
from tests.helpers.cli import REPO, cli_env, run_cli


def supervisor_record() -> SupervisorStatus:
    return {"phase": "running", "error": None, "app": "fix", "pid": 4242, "actions": ["cpu-stress-1"],
            "cpu_limits": "enforced (cgroup v2)",
            "services": {"back": {"workload": "back", "build": "sha256:" + "ab" * 32, "endpoint": "http://127.0.0.1:9",
                                  "instances": [{"id": "back-0", "service": "back", "workload": "back",
                                                 "build": "sha256:" + "ab" * 32, "ready": True, "restarts": 2,
                                                 "oom_kills": 1, "last_exit": 137, "pids": [11, 12],
                                                 "ports": {"8080": 9}}]},
                         "front": {"workload": "front", "build": None, "endpoint": None, "instances": []}}}


def test_the_local_status_record_prints_as_the_supervisor_wrote_it() -> None:
    """`faultkit status --json` on the local platform keeps its shape: the supervisor's record plus `up`."""
    record = supervisor_record()
    status = typed_status("local", record)
    assert json.dumps(status.as_json(), sort_keys=True) == json.dumps({"up": True, **record}, sort_keys=True)
    [back] = status.services["back"].instances
    assert back == Instance("back-0", "back", "sha256:" + "ab" * 32, True, 2, 1, 137)
    assert status.unready() == ["front"] and status.up and status.phase == "running"
    assert status.notes == ("memory limits: enforced; cpu limits: enforced (cgroup v2)",)


def test_nothing_up_is_one_shape_on_every_platform() -> None:
    for name in ("local", "kubernetes"):
        assert AppStatus(name, None).as_json() == {"up": False}


def test_the_shared_fields_and_other_sites() -> None:
    inst = Instance("cart-0", "cart", "sha256:1", ready=False, restarts=0)
    status = AppStatus("kubernetes", "shop", services={"cart": ServiceState("sha256:1", None, (inst,))},
                       sites={"site-b": SiteState("shop-b", ready=True)}, details={"namespace": "shop-a"})
    data = status.as_json()
    # what campaigns read, the same keys whichever platform wrote them
    assert data["up"] is True and data["app"] == "shop" and data["phase"] == "running"
    assert data["services"] == {"cart": {"build": "sha256:1", "endpoint": None, "instances": [
        {"id": "cart-0", "service": "cart", "build": "sha256:1", "ready": False, "restarts": 0, "oom_kills": 0,
         "last_exit": None}]}}
    assert data["sites"] == {"site-b": {"namespace": "shop-b", "ready": True}} and data["namespace"] == "shop-a"
    assert status.unready() == ["cart"]


def test_one_factory_with_typed_options(tmp_path: Path) -> None:
    ws = Workspace(root=tmp_path, state_dir=tmp_path / "state")
    local = open_platform("local", ws)
    assert isinstance(local, LocalPlatform) and isinstance(local, Platform)
    assert local.status() == AppStatus("local", None) and local.other_sites() == {}
    local.prepare()  # nothing to start, and no error while nothing is up
    with pytest.raises(UsageError, match="unknown platform 'docker'"):
        open_platform("docker", ws)
    with pytest.raises(UsageError, match="options of the kubernetes platform given for the local platform"):
        open_platform("local", ws, KubernetesOptions())
    assert options_class("kubernetes").namespaced and not options_class("local").namespaced
    assert platform_flag("local") == "" and platform_flag("kubernetes") == " --platform kubernetes"


def test_kubernetes_options_from_the_command_line_values(tmp_path: Path) -> None:
    images = tmp_path / "images.json"
    images.write_text(json.dumps({"cart": "cart:1"}))
    opts = KubernetesOptions.from_values({"namespace": "ns", "existing": True, "images_file": images,
                                          "loader": "kind load docker-image"})
    assert opts == KubernetesOptions(namespace="ns", existing=True, images={"cart": "cart:1"},
                                     loader="kind load docker-image")
    # --existing means something to `up` only: every other command takes it (from the environment) silently
    assert KubernetesOptions.from_values({"existing": True}) == KubernetesOptions(existing=True)
    assert LocalOptions.from_values({"namespace": "ignored"}) == LocalOptions()


def test_the_option_group_parses_and_reads_the_environment(tmp_path: Path) -> None:
    pytest.importorskip("kubernetes")
    env = cli_env(FAULTKIT_ROOT=str(REPO), FAULTKIT_STATE_DIR=str(tmp_path / "state"),
                  FAULTKIT_KUBERNETES_EXISTING="1", KUBECONFIG=str(tmp_path / "no-cluster"))
    proc = run_cli("up", "--platform", "kubernetes", cwd=REPO, env=env, check=2)
    assert proc.stderr.endswith("\nError: --existing: name the namespace with --namespace NS\n")
    assert "Traceback" not in proc.stderr
    # the campaign Job's children run status with the same environment: not a usage error there
    assert run_cli("status", "--platform", "kubernetes", "--json", cwd=REPO, env=env, check=0).stdout == \
        '{\n  "up": false\n}\n'
    for command in (("up",), ("status",), ("down",), ("validate",), ("recover",), ("schedule", "run"), ("gate",)):
        out = run_cli(*command, "--help", cwd=tmp_path, check=0).stdout
        assert "--platform [local|kubernetes]" in out and "$FAULTKIT_KUBERNETES_LOAD" in out, command
    for command in (("campaign", "run"),):  # its children open the platform
        out = run_cli(*command, "--help", cwd=tmp_path, check=0).stdout
        assert "--platform [local|kubernetes]" in out and "--load" not in out, command


@pytest.mark.parametrize("module", ["rollouts", "namespaces", "apply", "settings"])
def test_the_kubernetes_waits_watch_rather_than_sleep(module: str) -> None:
    """Rollouts, deletions, service accounts and slices are waited for on the API's watch (watching.py)."""
    text = (REPO / "faultkit" / "platforms" / "kubernetes" / f"{module}.py").read_text()
    assert "sleep(" not in text
    assert "watching.until(" in text
