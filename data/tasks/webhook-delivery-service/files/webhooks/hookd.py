"""hookd - TODO: implement (see SPEC.md)."""
