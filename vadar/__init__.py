"""vadar: answer 3D spatial questions about images by writing programs over a self-growing API."""

__version__ = "0.1.0"
