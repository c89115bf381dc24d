"""JSON Merge Patch (RFC 7386) apply/diff.

TODO: implement (see the task description)."""
