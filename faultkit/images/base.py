"""Base images without a registry: built from Debian packages with debootstrap, imported into Docker.

A base image is named by what it is made of: its tag ends in a digest of the suite, the package
list, the Python requirements installed from wheels (wheels.py) and the environment it sets, so the
same recipe finds the image already there (a second build reuses it) and another recipe gets another
image. A descriptor that names an image (`images: {base: REF}`) uses that image as it is.

A build whose RUN steps fetch over TLS (an upstream Dockerfile's `pip install -r requirements.txt`)
through a proxy that re-signs TLS, as corporate networks and sandboxes do, needs that proxy's
authority in the image: $FAULTKIT_BUILD_CA_BUNDLE names a PEM file whose certificates every base
built here adds to the system's bundle (its digest joins the tag). It is the machine's concern, not
the application's, so it is not in the descriptor.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import BaseImage
from faultkit.errors import InputError, PlatformError
from faultkit.images import aptsource, wheels

VARIANT = "minbase"
RECIPE = 1  # bump when the way a base is made changes, so old tags are not taken for new bases
# What apt and dpkg leave behind that no image needs: caches, package lists, logs.
TRIM = ("var/cache/apt/archives", "var/lib/apt/lists", "var/log", "var/cache/debconf/templates.dat-old")
_ARG_BASE = re.compile(r"^\s*ARG\s+BASE=(\S+)\s*$", re.MULTILINE | re.IGNORECASE)


def declared_base(text: str) -> str | None:
    """The image a Dockerfile's text takes as `ARG BASE=...` (faultkit's own kind), or None."""
    m = _ARG_BASE.search(text)
    return m.group(1) if m else None


def default_base(dockerfile: Path, text: str | None = None) -> str:
    """The image a Dockerfile starts from by default: its `ARG BASE=...` (`text`: the file, when read)."""
    try:
        found = declared_base(dockerfile.read_text() if text is None else text)
    except OSError as e:
        raise InputError(f"{dockerfile}: cannot read the Dockerfile ({e.strerror})") from None
    if found is None:
        raise InputError(f"{dockerfile}: no `ARG BASE=<image>` line; faultkit passes the base image as BASE "
                         "(an application's own Dockerfile: map its FROM images in the descriptor's images.from)")
    return found


CA_BUNDLE_ENV = "FAULTKIT_BUILD_CA_BUNDLE"
# where the added authorities go: Debian's bundle (Python's ssl, pip, curl read it), and the folder
# update-ca-certificates reads, so an image that runs it keeps them
SYSTEM_BUNDLE = "etc/ssl/certs/ca-certificates.crt"
LOCAL_CA = "usr/local/share/ca-certificates/build-ca.crt"


def extra_ca(environ: dict[str, str] | None = None) -> bytes | None:
    """The PEM certificates $FAULTKIT_BUILD_CA_BUNDLE names, or None when it is not set."""
    path = (os.environ if environ is None else environ).get(CA_BUNDLE_ENV)
    if not path:
        return None
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"{CA_BUNDLE_ENV}={path}: cannot read it ({e.strerror})") from None
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise InputError(f"{CA_BUNDLE_ENV}={path}: no PEM certificate in it")
    return data


def recipe_digest(spec: BaseImage, ca: bytes | None = None) -> str:
    recipe: dict[str, Any] = {"suite": spec.suite, "packages": sorted(spec.packages), "variant": VARIANT,
                              "recipe": RECIPE}
    if spec.python:  # only when given: a base without wheels keeps the tag it always had
        recipe["python"] = sorted(spec.python)
    if spec.env:
        recipe["env"] = dict(spec.env)
    if spec.files:  # by content: an edited entrypoint script is another image
        recipe["files"] = {dest: hashlib.sha256(src.read_bytes()).hexdigest() for dest, src in spec.files}
    if spec.entrypoint or spec.cmd:
        recipe["config"] = {"entrypoint": list(spec.entrypoint), "cmd": list(spec.cmd)}
    if ca is not None:
        recipe["ca"] = hashlib.sha256(ca).hexdigest()
    text = json.dumps(recipe, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def base_reference(spec: BaseImage, dockerfile_default: str) -> str:
    """The reference a build uses as BASE: the descriptor's image, or the content-addressed tag."""
    if spec.ref:
        return spec.ref
    repository = dockerfile_default
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return f"{repository}:{spec.suite}-{recipe_digest(spec, extra_ca())[:12]}"


def ensure_base(c: Any, spec: BaseImage, reference: str) -> tuple[str, bool]:
    """(image id, was it there already) of the base image, building it when it is missing."""
    import docker

    try:
        return c.images.get(reference).id, True
    except docker.errors.ImageNotFound:
        pass
    if spec.ref:
        try:
            return c.images.pull(spec.ref).id, False
        except docker.errors.APIError as e:
            raise PlatformError(
                f"images.base: {spec.ref} is not on this engine and cannot be pulled ({str(e).splitlines()[0]}); "
                "load it first or drop `images.base` to build one from Debian packages"
            ) from None
    with _lock(reference):
        try:  # someone else may have built it while this one waited for the lock
            return c.images.get(reference).id, True
        except docker.errors.ImageNotFound:
            pass
        return _build(c, spec, reference), False


@contextmanager
def _lock(reference: str) -> Iterator[None]:
    path = Path(tempfile.gettempdir()) / f"base-image-{hashlib.sha256(reference.encode()).hexdigest()[:16]}.lock"
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _build(c: Any, spec: BaseImage, reference: str) -> str:
    if shutil.which("debootstrap") is None:
        raise PlatformError("debootstrap: not found; apt-get install debootstrap, or name a base image in images.base")
    if os.geteuid() != 0:
        raise PlatformError("debootstrap: building a base image needs root; run as root or name one in images.base")
    root = Path(tempfile.mkdtemp(prefix="rootfs-"))
    try:
        cmd = ["debootstrap", f"--variant={VARIANT}", f"--include={','.join(sorted(spec.packages))}",
               spec.suite, str(root), aptsource.mirror(spec.suite)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-3:])
            raise PlatformError(f"debootstrap {spec.suite}: exit {done.returncode}: {tail}; check the apt mirror")
        if spec.python:
            wheels.install(root, spec.python)
        if (ca := extra_ca()) is not None:
            _add_ca(root, ca)
        for rel in TRIM:
            _empty(root / rel)
        _add_files(root, spec.files)  # after the trim: a recipe's file is kept wherever it goes
        return _import(c, root, spec, reference)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _add_ca(root: Path, ca: bytes) -> None:
    for rel in (LOCAL_CA, SYSTEM_BUNDLE):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_bytes() if rel == SYSTEM_BUNDLE and path.is_file() else b""
        path.write_bytes(old + (b"\n" if old and not old.endswith(b"\n") else b"") + ca)


def _add_files(root: Path, files: tuple[tuple[str, Path], ...]) -> None:
    """The recipe's files at their paths in the tree, executable where the app's file is."""
    for dest, src in files:
        target = root / dest.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        target.chmod(0o755 if os.access(src, os.X_OK) else 0o644)


def _empty(path: Path) -> None:
    if path.is_dir():
        for child in path.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    elif path.exists():
        path.unlink()


def import_changes(spec: BaseImage, reference: str) -> list[str]:
    """The image configuration `docker import` gives the base: the environment (the recipe's after the
    defaults, so it may replace them), a command and labels saying what it is made of."""
    repository = reference.rsplit(":", 1)[0]
    what = f"Debian {spec.suite} {VARIANT} with {' '.join(sorted(spec.packages))}"
    if spec.python:
        what += f"; Python wheels {' '.join(sorted(spec.python))}"
    return [
        'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        *(f"ENV {name}={json.dumps(value)}" for name, value in spec.env),
        *([f"ENTRYPOINT {json.dumps(list(spec.entrypoint))}"] if spec.entrypoint else []),
        f"CMD {json.dumps(list(spec.cmd or ['python3']))}",
        f"LABEL org.opencontainers.image.title={repository.rsplit('/', 1)[-1]}",
        f'LABEL org.opencontainers.image.description="{what}"',
        f"LABEL org.opencontainers.image.revision={recipe_digest(spec, extra_ca())}",
    ]


def _import(c: Any, root: Path, spec: BaseImage, reference: str) -> str:
    repository, tag = reference.rsplit(":", 1)
    changes = import_changes(spec, reference)
    # tar streams the tree straight into the engine; --numeric-owner keeps the root file system's ids
    tar = subprocess.Popen(["tar", "--numeric-owner", "--sort=name", "-C", str(root), "-cf", "-", "."],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert tar.stdout is not None
    try:
        out = c.api.import_image_from_stream(tar.stdout, repository=repository, tag=tag, changes=changes)
    finally:
        tar.stdout.close()
        err = tar.communicate()[1]
    if tar.returncode != 0:
        raise PlatformError(f"tar of the base file system failed: {err.decode(errors='replace').strip()[:200]}")
    status = json.loads(out.strip().splitlines()[-1]) if isinstance(out, str) and out.strip() else {}
    if "error" in status:
        raise PlatformError(f"docker import {reference}: {status['error']}")
    return str(c.images.get(reference).id)
