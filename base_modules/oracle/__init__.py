"""Oracle modules: answer from ground-truth annotations instead of running a model."""
