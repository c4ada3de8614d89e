"""Build and test never share a scene: ground-truth cases come only from the scenes of the questions
built, `vadar run` splits by scene, and an evaluation that shares scenes with its build says so."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import vadar
import vadar.library.proposals as proposals
from omni3d_bench.scene_split import scenes_of, split_by_scene
from omni3d_bench.types import Question
from vadar.config import VadarConfig
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.pipeline import build_api, evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.progress import Progress
from vadar.runs.results import ResultsFile
from vadar.runs.session import open_session
from scripted_jobs import count_helper_router, looking_program_of_its_kind

COUNT = "```python\nfinal_result = len(loc(image, 'cylinder'))\n```"


def asked(question_id: str, image: str, scene: str | None = None) -> Question:
    return Question(question_id, "How many?", "1", "int", image, Path(f"{image}.png"), "s", "test", scene_id=scene)


def test_a_split_by_scene_takes_whole_scenes_and_frames_of_one_scene_are_one_scene():
    questions = [asked("0", "a"), asked("1", "a"), asked("2", "b"), asked("3", "a"), asked("4", "c"),
                 asked("5", "room_f0", "room"), asked("6", "room_f3", "room")]
    first, rest = split_by_scene(questions, 4)
    assert [q.question_id for q in first] == ["0", "1", "2", "3"] and scenes_of(rest) == {"c", "room"}
    first, rest = split_by_scene(questions, 5)  # the room's two frames do not fit beside c
    assert [q.question_id for q in first] == ["0", "1", "2", "3", "4"]
    assert split_by_scene(questions, 2) == ([], questions)  # never part of a scene


@pytest.fixture
def verifiers(monkeypatch):
    """The questions every ground-truth verifier of a build was given to draw its cases from."""
    given: list[list[Question]] = []
    real = proposals.TruthVerifier

    def recording(checks, store, dataset, modules, questions):
        given.append(list(questions))
        return real(checks, store, dataset, modules, questions)

    monkeypatch.setattr(proposals, "TruthVerifier", recording)
    return given


def test_truth_check_cases_come_only_from_the_scenes_of_the_batches_built(verifiers, tmp_path):
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.library.admission, config.library.distill, config.library.validation = "off", False, False
    data = DataSelection().prepare()  # four images, three questions each
    with open_session(config, llm=ScriptedLLM([count_helper_router] * 20)) as session:
        build_api(session, data, tmp_path / "build", batch_size=3, batches=1)
    assert verifiers and all(scenes_of(given) == {"VADAR_sample_000000"} for given in verifiers)


def test_vadar_run_builds_on_some_scenes_and_scores_only_the_others(verifiers, tmp_path, monkeypatch):
    monkeypatch.setenv("VADAR_LIBRARY_ADMISSION", "off")  # admission has its own tests
    with vadar.open(home=tmp_path / "home", llm=ScriptedLLM([count_helper_router] * 100), quiet=True) as v:
        evaluation = v.run(limit=9, batch_size=4, batches=1, out=tmp_path / "run")
    scored = ResultsFile(tmp_path / "run" / "results.jsonl").read()
    data = {q.question_id: q for q in DataSelection(limit=9).prepare().questions}
    scored_scenes = {data[r.question_id].scene_key for r in scored}
    # 4 questions fit in the batch, but the second image's three would split: only the first image is built
    assert [r.question_id for r in scored] == [str(i) for i in range(3, 9)]
    assert verifiers and not any(scenes_of(given) & scored_scenes for given in verifiers)
    assert evaluation.summary.header["scene_disjoint"] is True


class Announcements(Progress):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def announce(self, message: str) -> None:
        self.lines.append(message)


def test_an_evaluation_sharing_scenes_with_its_build_says_so(tmp_path):
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.library.propose = config.library.distill = config.library.validation = False  # a build of record only
    data = DataSelection(limit=6).prepare()
    progress = Announcements()
    with open_session(config, llm=ScriptedLLM([looking_program_of_its_kind] * 20), progress=progress) as session:
        build_api(session, dataclasses.replace(data, questions=data.questions[:2]), tmp_path / "build", batch_size=2)
        shared = evaluate(session, data, tmp_path / "shared", method="static-api", show_progress=False)
        apart = evaluate(session, dataclasses.replace(data, questions=data.questions[3:]), tmp_path / "apart",
                         method="static-api", show_progress=False)
    assert shared.header["scene_disjoint"] is False and shared.header["questions_scope"] == "held-out"
    warnings = [line for line in progress.lines if line.startswith("warning:")]
    assert warnings == ["warning: 1 of the 4 questions are about a scene a build question of this library was "
                        "about (1 scene; scene_disjoint: false): split build and test by scene"]
    assert json.loads((tmp_path / "shared" / "summary.json").read_text())["scene_disjoint"] is False
    assert apart.header["scene_disjoint"] is True
    assert json.loads((tmp_path / "apart" / "summary.json").read_text())["scene_disjoint"] is True
    for run, disjoint in (("shared", False), ("apart", True)):  # recorded before the first answer as well
        assert json.loads((tmp_path / run / "run.json").read_text())["scene_disjoint"] is disjoint


def test_a_library_imported_with_its_build_still_says_which_scenes_it_was_built_on(tmp_path):
    """Exported and imported `--with-build` into another home, and evaluated on the same data set
    given by another path: the build's questions are still left out, its scenes still seen, and its
    right build programs come along as the worked examples."""
    from api_store import ApiStore

    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.library.propose = config.library.distill = config.library.validation = False
    data = DataSelection(limit=6).prepare()
    with open_session(config, llm=ScriptedLLM([COUNT] * 20)) as session:
        build_api(session, dataclasses.replace(data, questions=data.questions[:2]), tmp_path / "build", batch_size=2)
        batch = session.store.batches(session.store.runs("build-api")[0].id)[0]
        session.store.record_verified_program(batch_id=batch.id, question_id="0", question=data.questions[0].question,
                                              variant="without", code=COUNT[10:-4], answer="1", gold="1",
                                              error=None, correct=True, uses=())
        exported = session.store.export()
    # as exported on another machine, where the data set lay elsewhere under the same folder name
    for run in exported["runs"]:
        run["config"]["data"] = f"/elsewhere/{Path(run['config']['data']).name}"
    source = tmp_path / "library.json"
    source.write_text(json.dumps(exported))
    linked = tmp_path / "another-name"
    linked.symlink_to(data.dataset.root, target_is_directory=True)

    for with_build, disjoint in ((False, True), (True, False)):
        other = VadarConfig()
        other.paths.home = tmp_path / f"home-{with_build}"
        with ApiStore(other.paths.home / "vadar.sqlite", create=True) as store:
            store.import_functions(json.loads(source.read_text()), with_build=with_build)
            examples = store.verified_programs(correct_only=True)
            assert [(p.question_id, p.batch_id is not None) for p in examples] == ([("0", True)] if with_build else [])
        moved = DataSelection(data=linked, limit=6).prepare()
        with open_session(other, llm=ScriptedLLM([COUNT] * 20)) as session:
            result = evaluate(session, moved, tmp_path / f"eval-{with_build}", method="static-api", show_progress=False)
        assert result.header["scene_disjoint"] is disjoint
        assert result.header["build_questions"] == (2 if with_build else 0)


def test_a_second_build_run_is_given_the_questions_the_first_was_shown(tmp_path, monkeypatch):
    """The question-shape route of a library grown in a second run counts the first run's questions."""
    import vadar.runs.build as build

    seen: list[list[str]] = []
    monkeypatch.setattr(build, "shape_route", lambda batch: seen.append([q.question_id for q in batch.earlier]))
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.library.admission, config.library.distill, config.library.validation = "off", False, False
    with open_session(config, llm=ScriptedLLM([count_helper_router] * 40)) as session:
        build_api(session, DataSelection(limit=3).prepare(), tmp_path / "first", batch_size=3)
        build_api(session, DataSelection(skip=3, limit=3).prepare(), tmp_path / "second", batch_size=3)
    assert seen == [[], ["0", "1", "2"]]
