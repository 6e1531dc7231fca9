"""`faultkit build`: OCI images of an app's services on the local Docker engine."""

from __future__ import annotations

import click

from faultkit.commands.common import console, json_option, print_json, workspace


@click.command("build")
@click.option("--app", "app_name", required=True, help="Application whose services to build.")
@click.option("--service", "services", multiple=True, help="Build only this service (repeatable).")
@click.option("--fault", "fault_id", help="A code fault: build its target service with the fault's patch applied.")
@click.option("--push", "registry", metavar="REGISTRY", help="Tag and push every image to REGISTRY (host[:port]).")
@json_option
def build_cmd(app_name: str, services: tuple[str, ...], fault_id: str | None, registry: str | None,
              as_json: bool) -> int:
    """Build one image per service with Docker; the service's lint and unit tests run in the image.

    Example: faultkit build --app minishop --fault minishop-code-checkout-shipping-quote
    """
    from faultkit.images.app_images import build_app_images

    built = build_app_images(workspace(), app_name, services, fault_id, registry)
    if as_json:
        print_json({
            "app": built.app,
            "builds": [b.as_dict() for b in built.builds],
            "marker": built.marker.as_dict() if built.marker else None,
            "pushed": [p.__dict__ for p in built.pushed],
        })
        return 0
    # plain aligned columns: a table squeezed to a narrow terminal would cut the tag a manifest needs
    rows = [("service", "image id", "size", "seconds", "cached", "ci", "tag")] + [
        (b.service, b.id.removeprefix("sha256:")[:12], f"{b.size / 1e6:.1f} MB", f"{b.seconds:.1f}",
         "yes" if b.cached else "no", b.ci, b.tag) for b in built.builds]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    if built.marker:
        m = built.marker
        where = ", ".join(m.found_in) or "nowhere"
        console().print(f"marker {m.marker!r}: in {where} of the new image; in {len(m.earlier_with_marker)} of "
                        f"{len(m.earlier)} earlier {m.service} images" + ("" if m.ok else " [bold red](not proven)"))
    for p in built.pushed:
        console().print(f"pushed {p.reference} ({p.digest})")
    return 0
