"""Open image files once to build `Image` handles, failing with a message that names the file."""

from __future__ import annotations

from pathlib import Path

from base_modules.types import Image
from omni3d_bench.types import DatasetError


def name_problem(path: Path) -> str | None:
    """Why the image's file name cannot be used, or None: a name that is not valid UTF-8 (a byte
    such as 0xff) cannot travel as text to the sandbox, the results or an HTML page."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return f"image file name {ascii(str(path))} is not valid UTF-8; rename the file"
    return None


def image_size(path: Path) -> tuple[int, int]:
    """Return (width, height) of the image at `path` after verifying it decodes.

    Verification happens here, at load time, so a truncated file is reported against its path
    instead of surfacing later as an opaque error inside a perception module.
    """
    from PIL import Image as PILImage, UnidentifiedImageError

    path = Path(path)
    problem = name_problem(path)
    if problem is not None:
        raise DatasetError(problem)
    if not path.is_file():
        raise DatasetError(
            f"image file not found: {path}. Check that the images directory holds this file "
            "(the data set's layout names it)."
        )
    try:
        with PILImage.open(path) as img:
            size = img.size
            img.verify()
        with PILImage.open(path) as img:
            img.load()  # verify() skips pixel data; a full decode catches truncated files
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise DatasetError(
            f"image file is corrupt or not an image: {path} ({exc}). Replace it with a valid file."
        ) from exc
    return int(size[0]), int(size[1])


def image_handle(image_id: str, path: Path, focal_length: float | None = None) -> Image:
    """Build the plain-data handle programs pass to modules, with the size read from the file."""
    width, height = image_size(path)
    return Image(image_id=image_id, path=str(path), width=width, height=height, focal_length=focal_length)
