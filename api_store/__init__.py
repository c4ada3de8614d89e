"""The persistent, versioned library of generated API functions (SQLite)."""
