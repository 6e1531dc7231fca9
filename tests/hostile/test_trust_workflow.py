"""Issue 32: the shipped gate workflow. No secret reaches a job that checks out or runs a pull
request's code, and the gate job's script creates nothing with a giveaway word in its name (the
agent under test reads namespaces), so it passes faultkit's own leakage guard as shipped."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from faultkit.catalog.rules.leakage import find_words, giveaway_words
from faultkit.errors import InputError
from faultkit.images.naming import refuse_leaks

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "faultkit-gate.yml"
SCRIPT = REPO / "scripts" / "ci" / "gate-kubernetes.sh"
PR_EVENTS = {"pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment",
             "issue_comment", "workflow_run", "merge_group"}
SECRET = re.compile(r"secrets\.(?!GITHUB_TOKEN\b)[A-Za-z_]")
HEAD_REFS = ("github.event.pull_request.head", "github.head_ref", "refs/pull/")


def strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in (*strings(k), *strings(v))]
    if isinstance(node, list):
        return [s for v in node for s in strings(v)]
    return []


def events(workflow: dict[Any, Any]) -> set[str]:
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as True
    return {on} if isinstance(on, str) else set(on or ())


def runs_pr_code(workflow: dict[Any, Any], job: dict[str, Any]) -> bool:
    """Whether the job can run on a pull request's event, or checks out a pull request's head."""
    text = "\n".join(strings(job))
    if any(ref in text for ref in HEAD_REFS):
        return True
    if not events(workflow) & PR_EVENTS:
        return False
    guard = str(job.get("if", ""))
    return not ("github.event_name == 'push'" in guard and "pull_request" not in guard)


def exposures(workflow: dict[Any, Any]) -> list[str]:
    """`job: secret` for each secret a job that runs pull request code could read."""
    found = []
    shared = [s for s in strings({k: v for k, v in workflow.items() if k != "jobs"}) if SECRET.search(s)]
    for name, job in workflow.get("jobs", {}).items():
        if runs_pr_code(workflow, job):
            found += [f"{name}: {s.strip()}" for s in [*shared, *strings(job)] if SECRET.search(s)]
    return found


def test_no_secret_reaches_a_job_that_runs_pull_request_code() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert exposures(workflow) == []
    jobs = workflow["jobs"]
    assert runs_pr_code(workflow, jobs["gate"]) and runs_pr_code(workflow, jobs["validate"])
    assert not runs_pr_code(workflow, jobs["sign"])
    assert any(SECRET.search(s) for s in strings(jobs["sign"])), "the trusted signature is made after merge"


@pytest.mark.parametrize("job", [
    # the shipped workflow before issue 32: the key written to disk in the job that installs the PR
    {"steps": [{"uses": "actions/checkout@v4"}, {"run": "pip install ."},
               {"env": {"K": "${{ secrets.FAULTKIT_VALIDATOR_KEY }}"}, "run": "printf '%s' \"$K\" > k"}]},
    # guarded to push, but checking out the pull request's head
    {"if": "github.event_name == 'push'", "steps": [
        {"uses": "actions/checkout@v4", "with": {"ref": "${{ github.event.pull_request.head.sha }}"}},
        {"env": {"K": "${{ secrets.KEY }}"}, "run": "true"}]},
])
def test_the_check_finds_a_secret_where_pull_request_code_runs(job: dict[str, Any]) -> None:
    workflow = {True: {"pull_request": None, "push": {"branches": ["main"]}}, "jobs": {"j": job}}
    assert exposures(workflow) and exposures(workflow)[0].startswith("j: ")


def default_names(app: str = "minishop") -> list[str]:
    """The names the script creates with its defaults: its namespace, the node agent's, each site's."""
    line = next(x for x in SCRIPT.read_text().splitlines() if x.startswith("namespace="))
    out = subprocess.run(["bash", "-c", f'app={app}; unset FAULTKIT_GATE_NAMESPACE; {line}; echo "$namespace"'],
                         capture_output=True, text=True, check=True)
    namespace = out.stdout.strip()
    return [namespace, f"{namespace}-node", f"{namespace}-site-a", f"{namespace}-site-b"]


def test_the_gate_scripts_default_names_pass_faultkits_own_leakage_guard() -> None:
    names = default_names()
    assert names[0] == "review-minishop"
    words = giveaway_words(REPO)
    assert [n for n in names if find_words(n, words)] == []
    refuse_leaks(REPO, [(f"Namespace/{n}", n) for n in names])  # raises on a giveaway
    with pytest.raises(InputError, match="gives the fault away"):
        refuse_leaks(REPO, [("Namespace/faultkit-gate-minishop", "faultkit-gate-minishop")])  # the old default


def test_the_workflow_sets_no_namespace_and_the_script_needs_none() -> None:
    """The job runs the script with the workflow's own environment: whatever that leaves unset, the
    script's default must do."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    for job in ("validate", "sign"):
        envs = [s.get("env", {}) for s in workflow["jobs"][job]["steps"] if "gate-kubernetes.sh" in s.get("run", "")]
        assert envs and all("FAULTKIT_GATE_NAMESPACE" not in e for e in envs)
    assert (REPO / "faultkit" / "templates" / "faultkit-gate.yml").read_text() == WORKFLOW.read_text()
