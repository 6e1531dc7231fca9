"""Campaigns: validate many faults over N isolated app instances, resumably.

plan (which faults, in which order) -> runner (instances, worker threads, resume) -> worker (one
`faultkit validate` child per fault) -> state (each fault's queued/running/done file) -> summary.
timing and projection estimate durations from the protocol's windows and measured setup times;
board and view are the live display. The campaign drives validation only through the `faultkit`
command line, so it does not depend on the validator's modules.
"""
