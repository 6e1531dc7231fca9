"""GitHub Actions workflow commands: one `::error` annotation per finding, on its file and line."""

from __future__ import annotations

from faultkit.gate.core import GateResult


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_commands(result: GateResult) -> list[str]:
    prefix = result.changes.prefix
    out = []
    for p in result.privileged:  # paths are repository-relative already
        level = "warning" if result.accepted and not p.error else "error"
        state = "accepted by a maintainer" if result.accepted else "needs a maintainer (--accept-privileged)"
        out.append(f"::{level} file={_prop(p.path)},line=1,title=faultkit privileged change"
                   f"::{_data(f'{p.render()}; {state}')}")
    for case in result.cases:
        for f in case.errors:
            out.append(
                f"::error file={_prop(prefix + f.file)},line={f.line},title={_prop('faultkit ' + f.rule)}"
                f"::{_data(f'{f.path}: {f.message}')}"
            )
        if case.validation not in ("skipped", "admitted"):
            detail = "; ".join(case.failed_rules) or "no rule recorded"
            out.append(
                f"::error file={_prop(prefix + case.file)},line=1,title=faultkit validation"
                f"::{_data(f'{case.id} {case.validation}: {detail}')}"
            )
        for f in case.findings:
            if f.severity == "warning":
                out.append(f"::warning file={_prop(prefix + f.file)},line={f.line}::{_data(f.path + ': ' + f.message)}")
    return out


def step_summary(result: GateResult) -> str:
    """A Markdown table for $GITHUB_STEP_SUMMARY."""
    rows = ["| entry | file | lint | validation | result |", "|---|---|---|---|---|"]
    for c in result.cases:
        rows.append(
            f"| {c.id} | {c.file} | {len(c.errors)} errors | {c.validation} | "
            f"{'pass' if c.passed else '**rejected**'} |"
        )
    verdict = "passed" if result.passed else "failed"
    text = f"### faultkit gate {verdict}\n\n" + "\n".join(rows) + "\n"
    if result.privileged:
        state = "accepted by a maintainer" if result.accepted else "need a maintainer"
        text += f"\n#### privileged changes ({state})\n\n" + "".join(f"- {p.render()}\n" for p in result.privileged)
    return text
