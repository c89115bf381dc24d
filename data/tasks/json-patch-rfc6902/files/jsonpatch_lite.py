"""JSON Patch (RFC 6902) and JSON Pointer (RFC 6901).

TODO: implement (see the task description)."""
