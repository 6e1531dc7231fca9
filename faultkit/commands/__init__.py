"""The command layer: each module holds thin click commands (parse, call the core, render)."""
