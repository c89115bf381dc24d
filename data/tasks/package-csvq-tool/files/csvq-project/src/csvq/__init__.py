"""csvq: query CSV files."""
