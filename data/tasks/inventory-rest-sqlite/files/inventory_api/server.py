"""Inventory API server - TODO: implement (see README.md in this folder)."""
