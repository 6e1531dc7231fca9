"""The catalog report: one self-contained HTML page (inline CSS, inline SVG, no external assets)."""
