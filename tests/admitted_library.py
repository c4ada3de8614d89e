"""A library of admitted helpers in an in-memory store, from (name, signature, docstring) entries: what
the retrieval and shape-helper tests choose from (every body returns 1; only the texts matter)."""

from api_store import ApiStore


def admitted_library(*entries):
    store = ApiStore.memory()
    for name, signature, doc in entries:
        store.propose(name, signature, doc)
        store.implement(name, f"def {name}(image):\n    return 1\n")
        store.mark_admitted(name)
    return store.library()
