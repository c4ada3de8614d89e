"""The three agents: Signature (proposes helpers), API (implements them), Program (answers)."""
