"""gateway - TODO: implement (see SPEC.md)."""
