"""Data sets, metrics and benchmark generation for vadar."""

from omni3d_bench.types import AnswerType, Dataset, DatasetError, Question

__all__ = ["AnswerType", "Dataset", "DatasetError", "Question"]
