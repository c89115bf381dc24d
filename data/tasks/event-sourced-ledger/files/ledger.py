"""Event-sourced bank ledger (JSON Lines).

TODO: implement (see the task description)."""
