"""What a base recipe sets beyond its packages: an environment, as the image it stands for sets one
(an upstream python image's pip installs into the system; Debian's refuses without
PIP_BREAK_SYSTEM_PACKAGES), and the authorities of a proxy that re-signs TLS ($FAULTKIT_BUILD_CA_BUNDLE).

Bank of Anthos v0.6.8's contacts service built from its own Dockerfile over such a base (env and the
bundle given) and ran its unit tests in the image; the engine side of a base built from Debian packages
is proved by the image tests that build minishop's release (test_image_builds.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultkit.apps.descriptor import BaseImage, load_app
from faultkit.errors import InputError
from faultkit.images import base
from faultkit.workspace import Workspace
from tests.helpers.shipped import minishop_copy

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
PYTHON = {"suite": "bookworm", "packages": ["python3", "python3-pip"]}


def _app_with(tmp_path: Path, recipe: dict[str, object]):
    minishop_copy(tmp_path / "repo", lambda data: data.update(images={"from": {"python:3.12-slim": recipe}}),
                  skip=("src",))
    return load_app(Workspace(root=tmp_path / "repo", state_dir=tmp_path / "state"), "minishop")


def test_the_recipe_env_is_read_sorted_and_refused_when_not_strings(tmp_path: Path):
    app = _app_with(tmp_path / "a", {**PYTHON, "env": {"PYTHONPATH": "/deps", "PIP_BREAK_SYSTEM_PACKAGES": "1"}})
    assert app.from_images[0][1].env == (("PIP_BREAK_SYSTEM_PACKAGES", "1"), ("PYTHONPATH", "/deps"))
    # a base is a recipe or an image: the schema says which mapping is wrong, with its line
    for i, env in enumerate(({"PIP_BREAK_SYSTEM_PACKAGES": 1}, {"NOT A NAME": "x"})):
        with pytest.raises(InputError, match=r"app.yaml:\d+: images.from.python:3.12-slim: .* is not valid"):
            _app_with(tmp_path / str(i), {**PYTHON, "env": env})


def test_env_and_the_ca_bundle_are_part_of_the_recipe_and_a_base_without_keeps_its_tag():
    plain = BaseImage(suite="bookworm", packages=("python3",))
    assert base.recipe_digest(plain) == base.recipe_digest(BaseImage(suite="bookworm", packages=("python3",), env=()))
    with_env = BaseImage(suite="bookworm", packages=("python3",), env=(("PIP_BREAK_SYSTEM_PACKAGES", "1"),))
    other = BaseImage(suite="bookworm", packages=("python3",), env=(("PIP_BREAK_SYSTEM_PACKAGES", "0"),))
    digests = {base.recipe_digest(plain), base.recipe_digest(with_env), base.recipe_digest(other),
               base.recipe_digest(plain, PEM), base.recipe_digest(plain, PEM + PEM)}
    assert len(digests) == 5


def test_the_ca_bundle_is_read_from_the_environment_or_refused_in_one_line(tmp_path: Path):
    assert base.extra_ca({}) is None and base.extra_ca({base.CA_BUNDLE_ENV: ""}) is None
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(PEM)
    assert base.extra_ca({base.CA_BUNDLE_ENV: str(bundle)}) == PEM
    missing = tmp_path / "missing.pem"
    with pytest.raises(InputError, match=rf"^FAULTKIT_BUILD_CA_BUNDLE={missing}: cannot read it \(No such file"):
        base.extra_ca({base.CA_BUNDLE_ENV: str(missing)})
    bundle.write_text("not a certificate\n")
    with pytest.raises(InputError, match=r"ca.pem: no PEM certificate in it$"):
        base.extra_ca({base.CA_BUNDLE_ENV: str(bundle)})


def test_the_bundle_joins_the_systems_and_the_folder_update_ca_certificates_reads(tmp_path: Path):
    root = tmp_path / "rootfs"
    (root / "etc/ssl/certs").mkdir(parents=True)
    debian = b"-----BEGIN CERTIFICATE-----\nDEBIAN\n-----END CERTIFICATE-----"  # no newline at its end
    (root / base.SYSTEM_BUNDLE).write_bytes(debian)
    base._add_ca(root, PEM)
    assert (root / base.SYSTEM_BUNDLE).read_bytes() == debian + b"\n" + PEM
    assert (root / base.LOCAL_CA).read_bytes() == PEM
    bare = tmp_path / "bare"  # a recipe without ca-certificates: the bundle is the added one alone
    bare.mkdir()
    base._add_ca(bare, PEM)
    assert (bare / base.SYSTEM_BUNDLE).read_bytes() == PEM


def test_the_recipe_env_comes_after_the_defaults_quoted(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(base.CA_BUNDLE_ENV, raising=False)
    spec = BaseImage(suite="bookworm", packages=("python3",),
                     env=(("GREETING", 'say "hi" there'), ("PATH", "/usr/local/local/bin:/usr/bin")))
    changes = base.import_changes(spec, "bank/base:bookworm-0123456789ab")
    envs = [c for c in changes if c.startswith("ENV ")]
    assert envs[0].startswith("ENV LANG=C.UTF-8 PATH=")  # the defaults, then the recipe's, which replace them
    assert envs[1:] == ['ENV GREETING="say \\"hi\\" there"', 'ENV PATH="/usr/local/local/bin:/usr/bin"']
    assert f"LABEL org.opencontainers.image.revision={base.recipe_digest(spec)}" in changes
    assert "LABEL org.opencontainers.image.title=base" in changes


def test_recipe_files_entrypoint_and_cmd_are_read_and_part_of_the_recipe(tmp_path: Path):
    folder = tmp_path / "a" / "repo" / "apps" / "minishop" / "images"
    recipe = {**PYTHON, "files": {"/usr/local/bin/docker-entrypoint.sh": "images/entry.sh"},
              "entrypoint": ["docker-entrypoint.sh"], "cmd": ["postgres"]}
    minishop_copy(tmp_path / "a" / "repo", lambda data: data.update(images={"from": {"postgres:16": recipe}}),
                  skip=("src",))
    folder.mkdir()
    (folder / "entry.sh").write_text("#!/bin/sh\nexec \"$@\"\n")
    app = load_app(Workspace(root=tmp_path / "a" / "repo", state_dir=tmp_path / "state"), "minishop")
    spec = app.from_images[0][1]
    assert spec.files == (("/usr/local/bin/docker-entrypoint.sh", folder / "entry.sh"),)
    assert (spec.entrypoint, spec.cmd) == (("docker-entrypoint.sh",), ("postgres",))
    before = base.recipe_digest(spec)
    (folder / "entry.sh").write_text("#!/bin/sh\nset -e\nexec \"$@\"\n")
    assert base.recipe_digest(spec) != before  # by content: an edited script is another base
    changes = base.import_changes(spec, "bank/base:bookworm-0123456789ab")
    assert 'ENTRYPOINT ["docker-entrypoint.sh"]' in changes and 'CMD ["postgres"]' in changes


def test_a_recipe_file_outside_the_app_folder_or_missing_or_a_relative_dest_is_refused(tmp_path: Path):
    at = r"images.from.postgres:16: "
    cases = [({"/entry.sh": "../../../../etc/hostname"}, at + r"files: /entry.sh: .*etc/hostname is outside the app's"),
             ({"/entry.sh": "images/none.sh"}, at + r"files: /entry.sh: images/none.sh is not a file in the app's"),
             ({"etc/x": "app.yaml"}, at + r".* is not valid"),
             ({"/etc/../x": "app.yaml"}, at + r".* is not valid")]
    for i, (files, message) in enumerate(cases):
        with pytest.raises(InputError, match=r"app.yaml:\d+: " + message):
            minishop_copy(tmp_path / str(i) / "repo",
                          lambda data, f=files: data.update(images={"from": {"postgres:16": {**PYTHON, "files": f}}}),
                          skip=("src",))
            load_app(Workspace(root=tmp_path / str(i) / "repo", state_dir=tmp_path / "state"), "minishop")
