"""Follow one object from a frame to another with SAM 2's video predictor (transformers
`Sam2VideoModel`).

The two frames form a two-frame video: the box prompts the object in the first, the memory
attention carries it into the second, whose mask comes back at that frame's size (empty when the
model finds the object absent). The transformers video processor needs torchvision, so frames are
resized and normalised here, as `segmenter.py` does for still images.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from base_modules.real.segmenter import Sam2Loader, sam_boxes, sam_pixels

BOX_LABELS = (2, 3)
"""SAM 2's point labels for a box's top-left and bottom-right corners."""


class Sam2VideoTracker(Sam2Loader):
    model_class = "Sam2VideoModel"
    setting = "tracker_model"

    def follow(self, first: Any, box: np.ndarray, second: Any) -> np.ndarray:
        """(H, W) boolean mask, in `second`'s pixels, of the object `box` shows in `first`."""
        import torch
        import torch.nn.functional as F
        import transformers as tf

        self.load()
        dtype = next(self.model.parameters()).dtype
        video = torch.from_numpy(np.concatenate([sam_pixels(p, self.size) for p in (first, second)]))
        session = tf.Sam2VideoInferenceSession(
            video=video, video_height=first.height, video_width=first.width,
            inference_device=self.model.device, video_storage_device=self.model.device,
            inference_state_device=self.model.device, dtype=dtype)
        corners = sam_boxes(box, first.width, first.height, self.size).reshape(1, 1, 2, 2)
        obj_idx = session.obj_id_to_idx(1)
        session.add_point_inputs(obj_idx, 0, {
            "point_coords": torch.as_tensor(corners, dtype=torch.float32, device=self.model.device),
            "point_labels": torch.tensor([[BOX_LABELS]], dtype=torch.int32, device=self.model.device)})
        session.obj_with_new_inputs = [1]
        with torch.inference_mode():
            self.model(inference_session=session, frame_idx=0)
            out = self.model(inference_session=session, frame_idx=1)
            low_res = out.pred_masks[:1, :1].float()  # (1, 1, h, w) logits of the one object
            mask = F.interpolate(low_res, (second.height, second.width), mode="bilinear",
                                 align_corners=False)[0, 0] > 0
        return mask.cpu().numpy()
