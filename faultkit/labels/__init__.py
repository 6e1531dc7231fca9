"""Grounded labels: key evidence, a causal chain and numeric checkpoints, derived from a fault's
admitting evidence bundle alone (derived data: stored as labels.json beside the verdict, outside
the bundle's manifest, and recomputed by `faultkit judge`)."""
