"""Platforms: where an application runs. One protocol (base.Platform), several implementations."""
