"""The model-backed multi-view modules' geometry against the oracle scene graph.

On a generated multi-view scene the reconstruction gets the true cameras, the rendered metric
depth and the rendered instance masks in place of the pose, depth and `loc` models, so what is
checked is the geometry alone: back-projection, boxes from points, merging detections across
frames, the room's extent, and (with the cameras moved to a scaled, turned, shifted frame as a
reconstruction model would give them) recovering metric scale and the upright room frame.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image as PILImage

pytest.importorskip("mitsuba", reason="rendering needs Mitsuba 3: pip install -e '.[bench]'")

from base_modules.oracle.scene_graph import scene_graph_oracle_modules  # noqa: E402
from base_modules.real.config import RealModulesConfig  # noqa: E402
from base_modules.real.reconstruction import Reconstruction  # noqa: E402
from base_modules.real.scene_graph import RealCameraPose, RealObjects3D, RealRoomLayout  # noqa: E402
from base_modules.real.view_geometry import CameraView  # noqa: E402
from omni3d_bench.datasets.bench import BenchDataset  # noqa: E402
from omni3d_bench.generator import generate_benchmark  # noqa: E402

SCENE = "scene_00000"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("views-geometry")
    generate_benchmark(root, 1, seed=2, views=5, per_scene=2)
    return BenchDataset(root)


class TruePoses:
    """The annotated cameras, optionally moved into another frame and scale as a model sees them."""

    def __init__(self, dataset, model_from_world: np.ndarray | None = None, scale: float = 1.0) -> None:
        self.frames = {f["image_id"]: f["camera"] for f in dataset.world(SCENE)["frames"]}
        self.images = {dataset.image(i).path: i for i in self.frames}
        self.model_from_world, self.scale = model_from_world, scale
        self.metric_upright = model_from_world is None
        self.loaded = False

    def load(self) -> None:
        self.loaded = True

    def cameras(self, pixels):
        cameras, depths = [], []
        for picture in pixels:
            image_id = self.images[picture.filename]
            camera = self.frames[image_id]
            pose = np.array(camera["world_to_camera"])
            if self.model_from_world is not None:  # world -> model frame, then units of 1/scale
                pose = pose @ np.linalg.inv(self.model_from_world)
                pose[:3, 3] /= self.scale
                depths.append(rendered_depth(self.root, image_id) / self.scale)
            cameras.append(CameraView(np.array(camera["K"]), pose))
        return cameras, (depths if depths else None)


def rendered_depth(root, image_id: str) -> np.ndarray:
    return np.asarray(PILImage.open(root / "depth" / f"{image_id}.png"), dtype=np.float32) / 1000.0


def reconstruction(dataset, poses: TruePoses, config: RealModulesConfig | None = None) -> Reconstruction:
    poses.root = dataset.root

    def pixels_of(view):
        picture = PILImage.open(view.path)
        picture.filename = view.path
        return picture

    def masks_of(view, prompt):
        frame = dataset.scene(view.image_id)
        values = np.asarray(PILImage.open(dataset.root / "masks" / f"{view.image_id}.png"))
        return [values == o["id"] + 1 for o in frame["objects"]
                if prompt == "objects" or o["category_name"] == prompt]

    return Reconstruction(config or RealModulesConfig(), poses, pixels_of,
                          lambda view: rendered_depth(dataset.root, view.image_id), masks_of)


@pytest.fixture(scope="module")
def views(dataset):
    return [dataset.image(f["image_id"]) for f in dataset.world(SCENE)["frames"]]


@pytest.fixture(scope="module")
def oracle(dataset):
    return scene_graph_oracle_modules(dataset.scene, dataset.world)


def _matched(found: list[dict], expected: list[dict]) -> list[tuple[dict, dict]]:
    """Each expected object with the found one nearest to it (found objects used once)."""
    left, pairs = list(found), []
    for obj in expected:
        best = min(left, key=lambda f: np.linalg.norm(np.subtract(f["center"], obj["center"])))
        left.remove(best)
        pairs.append((best, obj))
    return pairs


def test_objects_from_true_cameras_match_the_scene_graph(dataset, views, oracle):
    objects = RealObjects3D(reconstruction(dataset, TruePoses(dataset)))
    found, expected = objects(views, "objects"), oracle.objects_3d(views, "objects")
    assert len(found) == len(expected)  # every physical object once across the five frames
    centre_errors, size_errors = [], []
    for got, want in _matched(found, expected):
        centre_errors.append(np.linalg.norm(np.subtract(got["center"], want["center"])))
        size_errors += list(np.abs(np.subtract(sorted(got["size"][:2]), sorted(want["size"][:2]))))
        size_errors.append(abs(got["size"][2] - want["size"][2]))
    # Pixels are taken at their centres and depth is stored in millimetres: a few millimetres off;
    # an object seen only from one side has a box short of the far side (at most ~0.1 m here).
    assert np.median(centre_errors) < 0.01 and max(centre_errors) < 0.1
    assert np.median(size_errors) < 0.015 and max(size_errors) < 0.2
    for category in {o["category_name"] for o in dataset.world(SCENE)["objects"]}:
        assert len(objects(views, category)) == len(oracle.objects_3d(views, category))


def test_room_and_cameras_from_true_cameras(dataset, views, oracle):
    rebuilt = reconstruction(dataset, TruePoses(dataset))
    room, truth = RealRoomLayout(rebuilt)(views), oracle.room_layout(views)
    assert sorted([room["width"], room["length"]]) == pytest.approx(
        sorted([truth["width"], truth["length"]]), abs=0.03)
    assert 1.0 < room["height"] <= truth["height"]  # no ceiling is rendered: the highest wall point seen
    pose = RealCameraPose(rebuilt, views)
    for view in views:
        assert pose(view)["position"] == pytest.approx(oracle.camera_pose(view)["position"], abs=1e-5)  # stored rounded


def test_cameras_in_a_model_frame_are_scaled_and_turned_upright(dataset, views, oracle):
    """A model's frame: turned 40 degrees about a tilted axis, shifted, in units of 2.5 m."""
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    angle = np.radians(40.0)
    cross = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    model_from_world = np.eye(4)
    model_from_world[:3, :3] = np.eye(3) + np.sin(angle) * cross + (1 - np.cos(angle)) * cross @ cross
    model_from_world[:3, 3] = [1.5, -4.0, 0.7]
    poses = TruePoses(dataset, model_from_world, scale=2.5)
    rebuilt = reconstruction(dataset, poses)

    room, truth = RealRoomLayout(rebuilt)(views), oracle.room_layout(views)
    assert sorted([room["width"], room["length"]]) == pytest.approx(
        sorted([truth["width"], truth["length"]]), abs=0.05)
    # The walls fix the frame up to a quarter turn about z: take the one that fits the cameras.
    pose = RealCameraPose(rebuilt, views)
    got = np.array([pose(v)["position"] for v in views])
    want = np.array([oracle.camera_pose(v)["position"] for v in views])
    turns = [np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
             for a in np.radians([0, 90, 180, 270])]
    turn = min(turns, key=lambda t: np.abs(got @ t.T - want).max())
    assert np.abs(got @ turn.T - want).max() < 0.05
    found, expected = RealObjects3D(rebuilt)(views, "objects"), oracle.objects_3d(views, "objects")
    assert len(found) == len(expected)
    placed = [{**o, "center": list(turn @ o["center"])} for o in found]
    errors = [np.linalg.norm(np.subtract(a["center"], b["center"])) for a, b in _matched(placed, expected)]
    assert np.median(errors) < 0.03 and max(errors) < 0.15


def test_camera_pose_places_a_frame_among_its_scene(dataset, views):
    """Bound to the scene's frames, one call reconstructs them all once; alone, the frame only."""
    poses = TruePoses(dataset)
    rebuilt = reconstruction(dataset, poses)
    bound = RealCameraPose(rebuilt).for_views(views)
    bound(views[3]), bound(views[1])
    assert list(rebuilt._scenes) == [tuple((v.image_id, v.path) for v in views)]
    RealCameraPose(rebuilt)(views[2])
    assert len(rebuilt._scenes) == 2 and poses.loaded


def test_real_modules_give_multi_view_questions_the_real_twins(dataset):
    from base_modules.real.scene_graph import RealObjects3D, RealSameObjectAcross
    from base_modules.view_modules import ViewModuleSet
    from vadar.config import VadarConfig
    from vadar.programs.namespace import program_namespace
    from vadar.runs.prepare import DataSelection

    config = VadarConfig()
    config.modules.backend = "real"
    prepared = DataSelection(data=dataset.root, split="test").prepare(config, load=False)
    twins = prepared.view_modules
    assert isinstance(twins, ViewModuleSet) and isinstance(twins.objects_3d, RealObjects3D)
    assert isinstance(twins.same_object_across, RealSameObjectAcross) and not twins.objects_3d.loaded
    views = [dataset.image(f["image_id"]) for f in dataset.world(SCENE)["frames"]]
    namespace = program_namespace(views[0], prepared.modules, views=views, view_modules=twins)
    assert namespace["camera_pose"].frames == views and twins.camera_pose.frames == []  # bound per program
    config.modules.per_module = {"depth": "oracle"}
    assert DataSelection(data=dataset.root, split="test").prepare(config, load=False).view_modules is None
