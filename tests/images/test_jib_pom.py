"""Reading a Jib service's pom: what it builds FROM, and what is refused before Maven runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from faultkit.apps.descriptor import BaseImage, load_app
from faultkit.errors import InputError
from faultkit.images import jib
from faultkit.images.service import jib_bases
from tests.images.jib_project import JRE, POM, write_project


def test_the_from_image_of_a_namespaced_pom_and_what_makes_a_jib_project(tmp_path: Path) -> None:
    write_project(tmp_path)
    assert jib.is_jib_project(tmp_path) and jib.from_image(tmp_path / "pom.xml") == JRE
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")  # a Dockerfile says how it is built
    assert not jib.is_jib_project(tmp_path)


def test_a_pom_without_a_from_image_or_not_xml_is_refused_with_where(tmp_path: Path) -> None:
    pom = tmp_path / "pom.xml"
    pom.write_text(POM.replace(f"<from><image>{JRE}</image></from>", ""))
    with pytest.raises(InputError, match=r"pom.xml: jib-maven-plugin names no <from><image>"):
        jib.from_image(pom)
    pom.write_text(POM.replace("</project>", ""))
    with pytest.raises(InputError, match=r"pom.xml:\d+: not well-formed XML"):
        jib.from_image(pom)


def test_an_unmapped_from_image_and_a_label_jib_cannot_pass_are_refused(tmp_path: Path, ws) -> None:
    write_project(tmp_path)
    app = load_app(ws, "minishop")
    with pytest.raises(InputError, match=r"Jib builds FROM eclipse-temurin:17-jre, which is not mapped"):
        jib_bases(app, tmp_path / "pom.xml")
    with pytest.raises(InputError, match=r"label 'note': .* a comma"):
        jib.build(tmp_path, "minishop/base:x", "minishop/email:1", {"note": "a,b"})


def test_a_mapped_from_image_gives_the_apps_base_by_recipe(tmp_path: Path, ws) -> None:
    write_project(tmp_path)
    jre = BaseImage(suite="bookworm", packages=("openjdk-17-jre-headless",))
    app = dataclasses.replace(load_app(ws, "minishop"), from_images=((JRE, jre),))
    bases, rewritten, args = jib_bases(app, tmp_path / "pom.xml")
    assert list(bases.values()) == [jre] and rewritten is None and args == {}
    assert next(iter(bases)).startswith("minishop/base:bookworm-")
