"""The one-node test cluster: build, start, inspect and stop it (driven by tools/cluster/cluster)."""
