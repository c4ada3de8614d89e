"""Model-backed perception modules: GroundingDINO + SAM2 `loc`, metric `depth`, VLM `vqa`.

Importing this package imports neither torch nor transformers; models load on first use.
"""

from base_modules.real.cache import Detection, PerceptionCache
from base_modules.real.config import RealModulesConfig
from base_modules.real.loading import ModelWeightsError, forget_models
from base_modules.real.modules import (
    RealDepth,
    RealLoc,
    RealObjectSize2D,
    RealSameObject,
    RealVQA,
    real_modules,
)
from base_modules.real.perception import Perception

__all__ = [
    "Detection", "ModelWeightsError", "Perception", "PerceptionCache", "RealDepth", "RealLoc",
    "RealModulesConfig", "RealObjectSize2D", "RealSameObject", "RealVQA", "forget_models",
    "real_modules",
]
