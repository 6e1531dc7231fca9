"""Images the cluster runs, made here from static binaries (nothing is pulled), and `load`.

A docker-archive (the layout `docker save` writes) is the one format both paths share: the pause
and CoreDNS images are written as one by this module, and `load IMAGE...` streams `docker save`
straight into the cluster's containerd. No registry is needed for a one-node cluster: the kubelet
finds imported images in containerd's k8s.io namespace, so pods use imagePullPolicy IfNotPresent.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
from pathlib import Path

from .layout import COREDNS_IMAGE, PAUSE_IMAGE, Layout


def _add(tar: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, 0
    tar.addfile(info, io.BytesIO(data))


def docker_archive(tag: str, binary: Path, entrypoint: list[str]) -> bytes:
    """One-layer image holding `binary` at /<name>: same binary, same bytes."""
    return docker_archive_of(tag, {binary.name: binary}, entrypoint, f"faultkit cluster: {binary.name}")


def docker_archive_of(tag: str, files: dict[str, Path], entrypoint: list[str], made_by: str) -> bytes:
    """One-layer image holding each host file (its content, symlinks followed) at the path it is
    named by (relative to /), with the folders on the way."""
    layer_buf = io.BytesIO()
    with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.USTAR_FORMAT) as layer:
        folders = sorted({str(parent) for name in files for parent in Path(name).parents if str(parent) != "."})
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            layer.addfile(info)
        for name, source in sorted(files.items()):
            _add(layer, name, source.read_bytes(), 0o755)
    layer_bytes = layer_buf.getvalue()
    diff_id = hashlib.sha256(layer_bytes).hexdigest()
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {"Entrypoint": entrypoint, "Env": ["PATH=/"], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{diff_id}"]},
        "history": [{"created_by": made_by}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    manifest = [{"Config": config_name, "RepoTags": [tag], "Layers": [f"{diff_id}/layer.tar"]}]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        _add(archive, f"{diff_id}/layer.tar", layer_bytes, 0o644)
        _add(archive, config_name, config_bytes, 0o644)
        _add(archive, "manifest.json", json.dumps(manifest).encode(), 0o644)
    return out.getvalue()


def ctr(layout: Layout, *args: str) -> list[str]:
    return [str(layout.bin / "ctr"), "--address", str(layout.containerd_socket), "--namespace", "k8s.io", *args]


def import_archive(layout: Layout, data: bytes) -> None:
    done = subprocess.run(ctr(layout, "images", "import", "--local", "-"), input=data, capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"ctr import failed: {done.stderr.decode(errors='replace').strip()}")


def present(layout: Layout) -> set[str]:
    out = subprocess.run(ctr(layout, "images", "list", "--quiet"), check=True, capture_output=True, text=True).stdout
    return set(out.split())


def import_system_images(layout: Layout) -> None:
    """The sandbox image and CoreDNS, unless a kept state already has them."""
    have = present(layout)
    wanted = ((PAUSE_IMAGE, "pause", ["/pause"]), (COREDNS_IMAGE, "coredns", ["/coredns"]))
    for tag, binary, entrypoint in wanted:
        if tag not in have:
            import_archive(layout, docker_archive(tag, layout.bin / binary, entrypoint))


def load(layout: Layout, refs: list[str]) -> list[str]:
    """`docker save IMAGE...` into the cluster's containerd, as one archive: the layers the images share
    (a service image's base) are written and imported once. Returns the names the kubelet will find."""
    save = subprocess.Popen(["docker", "save", *refs], stdout=subprocess.PIPE)
    assert save.stdout is not None
    imported = subprocess.run(ctr(layout, "images", "import", "--local", "-"), stdin=save.stdout,
                              capture_output=True, text=True)
    save.stdout.close()
    if save.wait() != 0:
        raise RuntimeError(f"docker save {' '.join(refs)} failed; is every image built and the Docker engine running?")
    if imported.returncode != 0:
        raise RuntimeError(f"ctr import of {' '.join(refs)} failed: {imported.stderr.strip()}")
    return refs
