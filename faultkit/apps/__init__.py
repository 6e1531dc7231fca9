"""Applications: descriptors, dependency graph and scope, Kubernetes manifests."""
