"""Data sets, metrics and benchmark generation for vadar."""

from omni3d_bench.sample import SAMPLE_SPLIT, sample_path
from omni3d_bench.types import AnswerType, Dataset, DatasetError, Question

__all__ = ["SAMPLE_SPLIT", "AnswerType", "Dataset", "DatasetError", "Question", "sample_path"]
