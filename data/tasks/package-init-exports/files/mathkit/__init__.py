"""mathkit: small numeric helpers."""
