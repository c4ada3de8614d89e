"""Dataset adapters."""
