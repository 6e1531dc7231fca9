"""Seeded fault schedules (SPEC.md section 4): a generator independent of files, the sources it
draws candidates from (a catalog release or the working tree), and the published schedule file."""
