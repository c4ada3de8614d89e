"""What generated code sees when it runs: the one place program namespaces are built.

Programs, API-agent tests and tool-agent steps all run with the image handle, the five
predefined modules and (where the method allows) the implemented library functions. A question
about several frames of one scene adds `views` (the frames, in order; `image` is the first) and
the multi-view modules.
A question that points at regions adds `region()` and the region tools bound to its regions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from api_store import FunctionRecord
from base_modules.module import ModuleSet
from base_modules.oracle.annotations3d import annotations3d_oracle_modules
from base_modules.oracle.clevr import clevr_oracle_modules
from base_modules.oracle.clevr_camera import REFERENCE_HEIGHT, REFERENCE_WIDTH
from base_modules.oracle.clevr_synthetic import camera_placed, camera_pose, synthetic_scene
from base_modules.region_geometry import region_modules
from base_modules.region_tools import bind_region_tools
from base_modules.types import Image, Region
from base_modules.view_modules import ViewModuleSet
from omni3d_bench.generator.sketch import CAMERA, sketch_scene
from vadar.programs.helper_rules import LeftOut, fit_library, warn_left_out
from vadar.sandbox import LibraryFunction


def library_functions(records: Iterable[FunctionRecord]) -> dict[str, LibraryFunction]:
    """Implemented functions as sandbox source, ready to join a namespace.

    The helper rules are checked again here (`helper_rules.fit_library`): a stored helper that breaks
    one (stored before it was checked, say) is left out with a warning, never ending the run; its
    definition would run before every program, and its name could replace a module's.
    """
    return {f.name: LibraryFunction(f.name, f.code) for f in fit_library(f for f in records if f.code)
            if f.code}


def program_namespace(image: Image, modules: ModuleSet, library: Iterable[FunctionRecord] = (),
                      regions: Sequence[Region] = (), *, views: list[Image] | None = None,
                      view_modules: ViewModuleSet | None = None) -> dict[str, Any]:
    """The image handle, the five modules and the given library functions; with `views`, also
    the frames and (when given) the multi-view modules; with `regions`, the question's region tools."""
    namespace: dict[str, Any] = {"image": image, **modules.as_namespace()}
    if views:
        namespace["views"] = list(views)
        if view_modules is not None:  # bound to these frames: a reconstruction sees them all
            namespace.update(view_modules.for_views(list(views)).as_namespace())
    if regions:
        namespace.update(bind_region_tools(regions, region_modules(modules)))
    helpers = library_functions(library)
    for name in helpers.keys() & namespace.keys():  # the name rules keep these apart; this holds regardless
        warn_left_out(LeftOut(name, "its name is bound in the namespace"))
    return {**namespace, **{n: f for n, f in helpers.items() if n not in namespace}}


def unit_scene_namespace(library: Iterable[FunctionRecord] = ()) -> Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]]:
    """Objects of a made-up test scene ({color, size, material, shape, right, behind}, placed as seen
    from the camera) -> a namespace whose modules are CLEVR oracles over that scene alone."""
    functions = list(library)

    def namespace(objects: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        placed = [{**o, **dict(zip(("x", "y"), camera_placed(o["right"], o["behind"])))} for o in objects]
        rotation, translation = camera_pose()
        scene = {**synthetic_scene(placed, "unit-test.png"),  # its camera is known: no fit from few objects
                 "camera": {"rotation": rotation.tolist(), "translation": translation.tolist()}}
        image = Image("unit-test", "unit-test.png", REFERENCE_WIDTH, REFERENCE_HEIGHT)
        return program_namespace(image, clevr_oracle_modules(lambda _: scene), functions)

    return namespace


def sketch_scene_namespace(library: Iterable[FunctionRecord] = ()) -> Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]]:
    """Objects of a made-up test scene of the generated benchmark ({category, color, material, x, z, w, l, h},
    see `omni3d_bench.generator.sketch`) -> a namespace whose modules are 3D-annotation oracles over it."""
    functions = list(library)

    def namespace(objects: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        scene = sketch_scene(objects)
        image = Image(scene["image_id"], scene["image_filename"], CAMERA.width, CAMERA.height, focal_length=CAMERA.fx)
        return program_namespace(image, annotations3d_oracle_modules(lambda _: scene), functions)

    return namespace
