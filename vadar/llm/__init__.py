"""LLM access: one OpenAI-compatible client, response cache, test doubles, embedded server."""
