"""Authoring: code patches captured from a git working copy, config mutations checked against the
rules, direct-fault templates, candidate enumeration, and the leakage check lint runs."""
