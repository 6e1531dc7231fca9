"""faultkit: author, validate and publish fault catalogs for SRE-agent benchmarks."""

__version__ = "0.1.0"
