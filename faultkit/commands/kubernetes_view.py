"""The kubernetes side of `faultkit up`, `status` and `down`: calls the platform, prints the outcome."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.table import Table

from faultkit.commands.common import console, print_json, workspace
from faultkit.errors import UsageError
from faultkit.jsonio import load_image_map
from faultkit.platforms.kubernetes import KubernetesPlatform


def up(app: str, replicas: int, timeout: float, namespace: str | None, adopt: str | None, kubeconfig: str | None,
       context: str | None, loader: str | None, existing: bool = False, images_file: Path | None = None,
       prometheus: str | None = None) -> None:
    if existing and not namespace:
        raise UsageError("--existing: name the namespace with --namespace NS")
    images = load_image_map(images_file) if images_file else None
    platform = KubernetesPlatform(workspace(), kubeconfig=kubeconfig, context=context, namespace=namespace,
                                  adopt=adopt, loader=loader, images=images, existing=existing, prometheus=prometheus)
    where = f"namespace {adopt} (adopted)" if adopt else f"namespace {namespace or app}"
    console(stderr=True).print(f"Bringing {app} up on the kubernetes platform in {where}...")
    started = time.time()
    platform.up(app, replicas=replicas, timeout=timeout)
    rec = platform.record()
    verb = "adopted" if adopt else "up"
    console().print(f"{app} is {verb}: {rec.target.describe()}, {len(platform.descriptor.services)} services "
                    f"ready in {time.time() - started:.1f}s")
    for site, other in platform.other_sites().items():
        console().print(f"  other site {site}: namespace {other.record().namespace} (observed, never changed)")


def snapshot(platform: KubernetesPlatform) -> dict[str, Any]:
    rec = platform.record()
    services: dict[str, Any] = {}
    for inst in platform.instances():
        svc = services.setdefault(inst.service, {"instances": []})
        svc["instances"].append({"id": inst.id, "ready": inst.ready, "restarts": inst.restarts,
                                 "oom_kills": inst.oom_kills, "last_exit": inst.last_exit, "build": inst.build})
    out = {"app": rec.app, "platform": "kubernetes", "mode": rec.mode, "namespace": rec.namespace,
           "context": rec.context, "server": rec.server, "services": services}
    others = platform.other_sites()
    if others:  # two-site apps: where each other site runs, and whether every pod there is ready
        out["sites"] = {site: {"namespace": p.record().namespace, "ready": all(i.ready for i in p.instances())}
                        for site, p in others.items()}
    return out


def status(as_json: bool) -> None:
    platform = KubernetesPlatform(workspace())
    if not platform.is_up():
        if as_json:
            print_json({"up": False})
        else:
            console().print("Nothing is up on the kubernetes platform.")
        return
    data = snapshot(platform)
    if as_json:
        print_json({"up": True, **data})
        return
    table = Table(title=f"{data['app']} in namespace {data['namespace']} ({data['mode']}) on {data['server']}")
    for column in ("service", "ready", "restarts", "oom", "build"):
        table.add_column(column, no_wrap=True)
    for name, svc in sorted(data["services"].items()):
        insts = svc["instances"]
        builds = sorted({str(i["build"]).split(":", 1)[-1][:10] for i in insts})
        table.add_row(name, f"{sum(i['ready'] for i in insts)}/{len(insts)}", str(sum(i["restarts"] for i in insts)),
                      str(sum(i["oom_kills"] for i in insts)), ",".join(builds) or "-")
    console().print(table)
    for site, info in data.get("sites", {}).items():
        console().print(f"other site {site}: namespace {info['namespace']}, "
                        f"{'every pod ready' if info['ready'] else 'not every pod ready'}")


def down() -> None:
    platform = KubernetesPlatform(workspace())
    if not platform.is_up():
        console().print("Nothing is up on the kubernetes platform.")
        return
    rec = platform.owner.require()
    others = [p.owner.require().namespace for p in platform.other_sites().values()]
    platform.down()
    if others:
        console().print(f"the other sites' namespaces {', '.join(others)} are deleted and gone.")
    if rec.mode == "given":
        console().print(f"{rec.app} is down; its objects in namespace {rec.namespace} are deleted (the namespace "
                        "stays: faultkit did not create it).")
    elif rec.mode == "adopted":
        console().print(f"{rec.app} in namespace {rec.namespace} is released; its objects were left as they are.")
    else:
        console().print(f"{rec.app} is down; namespace {rec.namespace} is deleted and gone.")
