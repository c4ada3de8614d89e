"""Region tools: references resolved, oracle twins against numpy on the annotations, geometric twins."""

from __future__ import annotations

import math

import numpy as np
import pytest

from base_modules.masks import encode_rle
from base_modules.module import REGION_MODULES, ModuleError, spec_class
from base_modules.oracle.annotations3d import annotations3d_oracle_modules
from base_modules.oracle.regions3d import footprint, in_polygon
from base_modules.region_geometry import geometric_region_modules, region_modules
from base_modules.region_tools import RegionTable, bind_region_tools, choose
from base_modules.types import Image, Region
from regions_scene import FOCAL, HEIGHT, OBJECTS, WIDTH, box_mask, scene

IMAGE = Image("wh_000", "wh_000.png", WIDTH, HEIGHT, focal_length=FOCAL)


def named(index: int, name: str, *, with_id: bool = True) -> Region:
    rle = encode_rle(box_mask(OBJECTS[index]["bbox2D_proj"]))
    return Region(name, tuple(OBJECTS[index]["bbox2D_proj"]), tuple(rle["size"]), rle["counts"],
                  index if with_id else None)


REGIONS = (named(0, "<pallet_0>"), named(1, "<pallet_1>"), named(2, "<box_0>"), named(3, "<buffer_0>"))


@pytest.fixture()
def modules():
    return annotations3d_oracle_modules(lambda image_id: scene() if image_id == "wh_000" else None)


def numpy_inside(obj: dict, area: dict) -> bool:
    """Independent rule: the object's centre in the area's own frame, within half its sizes."""
    c, s = math.cos(area["yaw_world"]), math.sin(area["yaw_world"])
    dx, dy = np.subtract(obj["center_world"][:2], area["center_world"][:2])
    local = (c * dx + s * dy, -s * dx + c * dy)
    return abs(local[0]) <= area["dimensions"][0] / 2 and abs(local[1]) <= area["dimensions"][1] / 2


def test_oracle_distance_and_inside_match_numpy(modules) -> None:
    tools = region_modules(modules)
    assert type(tools.distance).__name__ == "DistanceOracle"
    for a in range(4):
        for b in range(4):
            expected = np.linalg.norm(np.subtract(OBJECTS[a]["center_world"], OBJECTS[b]["center_world"]))
            assert tools.distance(IMAGE, REGIONS[a], REGIONS[b]) == pytest.approx(expected)
            assert tools.inside(IMAGE, REGIONS[a], REGIONS[b]) == numpy_inside(OBJECTS[a], OBJECTS[b])
    assert [tools.inside(IMAGE, REGIONS[k], REGIONS[3]) for k in range(3)] == [True, False, True]


def test_footprint_test_matches_numpy_on_many_points() -> None:
    area = OBJECTS[3]
    hull = footprint(np.array(area["bbox3D_world"]))
    rng = np.random.default_rng(1)
    points = rng.uniform([-3.5, 2.5], [2.5, 7.5], size=(400, 2))
    got = [in_polygon(p, hull) for p in points]
    want = [numpy_inside({"center_world": [*p, 0.0]}, area) for p in points]
    assert got == want and 50 < sum(got) < 350


def test_oracle_left_right_and_queries(modules) -> None:
    tools = region_modules(modules)
    xc = [(o["bbox2D_proj"][0] + o["bbox2D_proj"][2]) / 2 for o in OBJECTS[:3]]
    assert tools.is_left(IMAGE, REGIONS[0], REGIONS[1]) is True
    assert tools.is_left(IMAGE, REGIONS[1], REGIONS[2]) == (xc[1] < xc[2])
    three = list(REGIONS[:3])
    assert tools.pick_region(IMAGE, three, "leftmost") == int(np.argmin(xc))
    assert tools.pick_region(IMAGE, three, "rightmost") == int(np.argmax(xc))
    assert tools.pick_region(IMAGE, three, "middle") == int(np.argsort(xc)[1])
    ranges = [np.linalg.norm(o["center_cam"]) for o in OBJECTS[:3]]
    assert tools.pick_region(IMAGE, three, "closest") == int(np.argmin(ranges)) == 2
    with pytest.raises(ModuleError, match="which must be one of"):
        tools.pick_region(IMAGE, three, "biggest")


def test_oracle_resolves_regions_without_ids_by_box(modules) -> None:
    tools = region_modules(modules)
    plain = [named(k, f"<r_{k}>", with_id=False) for k in range(4)]
    assert tools.inside(IMAGE, plain[0], plain[3]) is True
    assert tools.distance(IMAGE, plain[0], plain[1]) == pytest.approx(
        tools.distance(IMAGE, REGIONS[0], REGIONS[1]))


def test_choose_orders_and_breaks_ties_by_position() -> None:
    assert choose([3.0, 1.0, 2.0], "leftmost") == 1 and choose([3.0, 1.0, 2.0], "rightmost") == 0
    assert choose([3.0, 1.0, 2.0], "middle") == 2 and choose([5.0, 1.0, 3.0, 4.0], "middle") == 2
    assert choose([1.0, 1.0], "closest") == 0


def test_references_resolve_to_regions() -> None:
    table = RegionTable(REGIONS)
    assert table.resolve(1) is REGIONS[1]
    assert table.resolve("<buffer_0>") is REGIONS[3] and table.resolve(" box_0 ") is REGIONS[2]
    assert table.resolve(list(REGIONS[0].box)) is REGIONS[0]  # region(k)'s box keeps the mask
    other = table.resolve([1, 2, 3, 4])
    assert other.name == "" and other.box == (1.0, 2.0, 3.0, 4.0) and other.mask_counts is None
    assert table.box("<pallet_1>") == list(REGIONS[1].box)
    with pytest.raises(ModuleError, match=r"region 7 does not exist: this question has 4 region"):
        table.resolve(7)
    with pytest.raises(ModuleError, match="no region '<shelf_0>' in this question; its regions are <pallet_0>"):
        table.resolve("<shelf_0>")
    with pytest.raises(ModuleError, match="expected a region"):
        table.resolve(True)
    with pytest.raises(ModuleError, match="region\\(\\) takes a region number"):
        table.box([1, 2, 3, 4])


def test_bound_tools_take_numbers_names_and_boxes(modules) -> None:
    bound = bind_region_tools(REGIONS, region_modules(modules))
    assert set(bound) == {"region", *(spec.name for spec in REGION_MODULES)}
    d = bound["distance"](IMAGE, 0, "<pallet_1>")
    assert d == pytest.approx(bound["distance"](IMAGE, bound["region"](0), bound["region"](1)))
    pallets = modules.loc(IMAGE, "pallet")
    assert sum(bound["inside"](IMAGE, box, "<buffer_0>") for box in pallets) == 1
    assert bound["pick_region"](IMAGE, [0, 1, 2], "rightmost") == 1
    with pytest.raises(ModuleError, match="wrap it in a list"):
        bound["pick_region"](IMAGE, list(REGIONS[0].box), "leftmost")
    assert all(spec_class(m) in REGION_MODULES for m in region_modules(modules).as_namespace().values())


def test_geometric_twins_from_masks_and_depth(modules) -> None:
    tools = geometric_region_modules(modules.depth)
    a, b = REGIONS[0], REGIONS[1]

    def lifted(region: Region, index: int) -> np.ndarray:
        ys, xs = np.nonzero(box_mask(OBJECTS[index]["bbox2D_proj"]))
        u, v, z = xs.mean() + 0.5, ys.mean() + 0.5, OBJECTS[index]["depth"]
        return np.array([(u - WIDTH / 2) * z / FOCAL, (v - HEIGHT / 2) * z / FOCAL, z])

    assert tools.distance(IMAGE, a, b) == pytest.approx(np.linalg.norm(lifted(a, 0) - lifted(b, 1)))
    assert tools.is_left(IMAGE, a, b) is True and tools.is_left(IMAGE, b, a) is False
    assert tools.pick_region(IMAGE, list(REGIONS[:3]), "closest") == 2
    floor = np.zeros((HEIGHT, WIDTH), bool)
    floor[100:, :80] = True
    rle = encode_rle(floor)
    area = Region("<buffer_0>", (0.0, 100.0, 80.0, 120.0), tuple(rle["size"]), rle["counts"])
    for k in range(3):
        x0, _, x1, y1 = OBJECTS[k]["bbox2D_proj"]
        ys, xs = np.nonzero(box_mask(OBJECTS[k]["bbox2D_proj"]))
        foot_x, foot_y = int(xs.mean() + 0.5), int(math.floor(y1 - 0.5))
        expected = bool(foot_y < HEIGHT and floor[foot_y, foot_x])
        assert tools.inside(IMAGE, REGIONS[k], area) == expected
    with pytest.raises(ModuleError, match="no known focal length"):
        tools.distance(Image("wh_000", "wh_000.png", WIDTH, HEIGHT), a, b)
