"""chat server - TODO: implement (see PROTOCOL.md)."""
