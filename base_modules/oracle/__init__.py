"""Oracle modules: answer from ground-truth annotations instead of running a model."""

from base_modules.oracle.clevr import clevr_oracle_modules

__all__ = ["clevr_oracle_modules"]
