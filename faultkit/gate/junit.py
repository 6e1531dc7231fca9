"""JUnit XML for the gate: one testcase per changed entry, failures carry the findings; one more,
`privileged changes`, when the pull request changes anything privileged (failing unless accepted)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from faultkit.gate.core import Case, GateResult
from faultkit.yamlio import atomic_write


def failure_text(case: Case, prefix: str = "") -> str:
    lines = [f"{prefix}{f.render()}" for f in case.errors]
    if case.validation not in ("skipped", "admitted"):
        lines.append(f"validation: {case.validation}")
        lines += [f"  {rule}" for rule in case.failed_rules]
    return "\n".join(lines)


def junit_xml(result: GateResult) -> str:
    cases = result.cases
    extra = 1 if result.privileged else 0
    failures = sum(not c.passed for c in cases) + (extra and not result.privileged_passed)
    tests = str(len(cases) + extra)
    suites = ET.Element("testsuites", name="faultkit gate", tests=tests, failures=str(failures))
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="faultkit gate",
        tests=tests,
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    for case in cases:
        prefix = result.changes.prefix
        tc = ET.SubElement(
            suite,
            "testcase",
            name=case.id,
            classname=case.file.rsplit("/", 1)[0].replace("/", "."),
            file=prefix + case.file,
        )
        if not case.passed:
            text = failure_text(case, prefix)
            first = text.splitlines()[0] if text else "rejected"
            ET.SubElement(tc, "failure", message=first, type="rejected").text = text
        props = ET.SubElement(tc, "system-out")
        props.text = f"{case.why}; validation: {case.validation}; recorded verdict: {case.recorded or 'n/a'}"
    if result.privileged:
        tc = ET.SubElement(suite, "testcase", name="privileged changes", classname="faultkit.trust")
        text = "\n".join(p.render() for p in result.privileged)
        if not result.privileged_passed:
            first = f"{len(result.privileged)} privileged changes need a maintainer"
            ET.SubElement(tc, "failure", message=first, type="privileged").text = text
        ET.SubElement(tc, "system-out").text = ("accepted by a maintainer\n" if result.accepted else "") + text
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(result: GateResult, path: Path) -> None:
    atomic_write(path, junit_xml(result))
