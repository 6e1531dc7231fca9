"""Tests that give a copy of minishop another `signals:` part write it into the section app.yaml
already has (it declares probe_marked there); a second `signals:` key would be refused."""

from __future__ import annotations

from faultkit.workspace import Workspace


def add_to_signals(ws: Workspace, lines: str) -> None:
    """Insert `lines`, YAML indented by two spaces, at the top of the copy's signals: section."""
    path = ws.apps_dir / "minishop" / "app.yaml"
    text = path.read_text()
    assert "\nsignals:\n" in text, f"{path}: no signals: section to add to"
    path.write_text(text.replace("\nsignals:\n", "\nsignals:\n" + lines, 1))
