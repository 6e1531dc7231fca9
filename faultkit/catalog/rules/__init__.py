"""The lint rules, one module per concern; catalog/lint.py runs them.

context.py   what a rule may consult (the workspace, apps, manifests, the leakage words) and what it returns
schema.py    reading a file and checking it against the entry schema
semantic.py  the entry against its application: target, scope, settings, direct actions
patches.py   a code fault's patch
leakage.py   giveaway words in anything an agent can observe, and leftover placeholders
invariants.py  whole-catalog rules over the facts of every file (unique ids, one change once, location)

Imports run downward only: authoring and the gate import these, never the reverse.
"""
