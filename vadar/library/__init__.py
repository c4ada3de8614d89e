"""Growing a library that helps: outcome-verified admission, retrieval and worked examples."""
