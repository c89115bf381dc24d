"""jobqueue service - TODO: implement (see SPEC.md)."""
