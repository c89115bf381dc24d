"""metricsd - see SPEC.md. Not implemented yet."""
