"""Observation: what a window of a running application looked like, as raw samples."""
