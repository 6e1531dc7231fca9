"""The catalog: entry model, schema checks, loader, semantic lint, release build."""
