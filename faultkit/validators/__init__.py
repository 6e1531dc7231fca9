"""Validation: the staged admission protocol, screening rules, evidence bundles, judge, journal."""
