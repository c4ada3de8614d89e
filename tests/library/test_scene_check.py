"""A build program right on its own scene is run on other build scenes: right by chance is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from api_store import ApiStore
from api_store.evidence import SceneCheck, WrongScene
from omni3d_bench.counterfactuals import on_other_scenes
from omni3d_bench.datasets.clevr import ClevrDataset
from vadar.library.scene_check import SceneChecker, build_scenes, check_right_programs
from vadar.programs.outcome import ProgramOutcome
from vadar.runs.distillation import BuildJudge
from vadar.runs.prepare import oracle_modules
from vadar.sandbox import execute

CLEVR_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "clevr"
pytestmark = pytest.mark.skipif(not CLEVR_DIR.is_dir(), reason="shared CLEVR data not present")

# dev 78, "Are there more brown cylinders than purple cubes?" (gold no): a build program that
# counted with a helper about something else answered it right and became a worked example.
CONSTANT_NO = 'final_result = "no"\n'
COUNTS = ('cylinders = loc(image, "brown cylinder")\ncubes = loc(image, "purple cube")\n'
          'final_result = "yes" if len(cylinders) > len(cubes) else "no"\n')


@pytest.fixture(scope="module")
def clevr():
    dataset = ClevrDataset(CLEVR_DIR)
    questions = dataset.questions("dev")
    build = questions[:104]  # the build side: its scenes only
    return dataset, oracle_modules(dataset), build


def _question(build, question_id):
    return next(q for q in build if q.question_id == question_id)


def _checker(clevr, limit=4):
    dataset, modules, build = clevr
    return SceneChecker(lambda code, ns: execute(code, ns, timeout_s=10), dataset, modules, build_scenes(build), limit)


def test_the_question_is_asked_again_only_where_it_applies_with_that_scenes_gold(clevr):
    dataset, _, build = clevr
    compare = _question(build, "78")
    others = list(on_other_scenes(dataset, compare, build_scenes(build)))
    assert compare.image_id not in {o.image_id for o in others} and len(others) == len(build_scenes(build)) - 1
    assert {o.answer for o in others} == {"yes", "no"}
    assert all(o.question == compare.question and o.question_id.startswith("78@") for o in others)
    # "...in front of the small purple matte thing...": only scenes with exactly one such thing
    unique = _question(build, "79")
    assert 0 < len(list(on_other_scenes(dataset, unique, build_scenes(build)))) < len(others)
    # a question without a functional program has no other scene
    assert list(on_other_scenes(dataset, _without_program(compare), build_scenes(build))) == []


def _without_program(question):
    import dataclasses
    return dataclasses.replace(question, gold_program=None)


def test_a_constant_answer_is_caught_on_the_first_scene_whose_answer_differs(clevr):
    checker = _checker(clevr, limit=1)
    question = _question(clevr[2], "78")
    check = checker.check(question, CONSTANT_NO, [])
    assert check == SceneCheck(1, (WrongScene("CLEVR_train_000006", "yes", "no"),))
    assert not check.holds


def test_a_right_program_holds_on_every_other_scene(clevr):
    check = _checker(clevr).check(_question(clevr[2], "78"), COUNTS, [])
    assert check is not None and check.checked == 4 and check.holds


def test_a_program_that_fails_elsewhere_is_wrong_there_with_its_error(clevr):
    fragile = 'cube = loc(image, "purple cube")[0]\nfinal_result = "no"\n'
    check = _checker(clevr).check(_question(clevr[2], "78"), fragile, [])
    failed = [w for w in check.wrong if w.error]
    assert not check.holds and failed and all("IndexError" in w.error and "line 1" in w.error for w in failed)


def test_checks_off_check_nothing(clevr):
    assert _checker(clevr, limit=0).check(_question(clevr[2], "78"), CONSTANT_NO, []) is None


def test_the_stores_right_programs_wrong_elsewhere_are_no_longer_right(tmp_path, clevr):
    build = clevr[2]
    with ApiStore(tmp_path / "lib.sqlite") as store:
        for code in (CONSTANT_NO, COUNTS):
            store.record_verified_program(batch_id=None, question_id="78", question=_question(build, "78").question,
                                          variant="build", code=code, answer="no", gold="no", error=None,
                                          correct=True, uses=[])
        events: list[str] = []
        assert check_right_programs(store, _checker(clevr), build, events.append) == (2, 1)
        assert check_right_programs(store, _checker(clevr), build) == (0, 0)  # each program is run once
        constant, counts = store.verified_programs()
        assert constant.correct is False and not constant.other_scenes.holds
        assert counts.correct is True and counts.other_scenes.holds and counts.other_scenes.checked == 4
        assert [p.code for p in store.verified_programs(correct_only=True)] == [COUNTS]
        assert "right by chance" in events[0] and "CLEVR_train_000006" in events[0]
        exported = store.export()
    with ApiStore(tmp_path / "copy.sqlite") as copy:  # an import keeps what other scenes said
        copy.import_functions(exported, with_build=True)
        assert [p.other_scenes for p in copy.verified_programs()] == [constant.other_scenes, counts.other_scenes]


def test_a_build_keeps_writing_programs_for_a_yes_no_question_other_scenes_can_check(clevr):
    judge = BuildJudge(_checker(clevr), [])
    question = _question(clevr[2], "78")
    lucky = ProgramOutcome(answer="no", program=CONSTANT_NO)
    assert not judge.right(question, lucky) and not judge.accept(question, lucky)
    right = ProgramOutcome(answer="no", program=COUNTS)
    assert judge.right(question, right) and judge.accept(question, right)
    assert judge.scene_check(question, right).checked == 4
    # with no other scene to check it, a yes/no answer is a guess: no second program is written
    alone = BuildJudge(_checker(clevr, limit=0), [])
    assert alone.accept(question, ProgramOutcome(answer="yes", program='final_result = "yes"\n'))


def test_library_check_programs_command_checks_the_build_programs_of_an_existing_library(tmp_path, clevr,
                                                                                     monkeypatch):
    from typer.testing import CliRunner

    from vadar.cli import app

    dataset, _, build = clevr
    monkeypatch.setenv("VADAR_HOME", str(tmp_path))
    with ApiStore(tmp_path / "vadar.sqlite") as store:
        run = store.start_run("build-api", config={"data": str(dataset.root), "split": "dev"})
        batch = store.start_batch(run.id, [q.question_id for q in build])  # their scenes are the build scenes
        for code in (CONSTANT_NO, COUNTS):
            store.record_verified_program(batch_id=batch.id, question_id="78", question=_question(build, "78").question,
                                          variant="build", code=code, answer="no", gold="no", error=None,
                                          correct=True, uses=[])
    result = CliRunner().invoke(app, ["library", "check-programs", "--data", str(dataset.root), "--split", "dev"])
    assert result.exit_code == 0, result.output
    assert f"2 right programs of {len(build)} build questions run on other build scenes" in result.output
    assert "1 right by chance" in result.output and "program #1 for build question 78" in result.output
    with ApiStore(tmp_path / "vadar.sqlite") as store:
        assert [p.code for p in store.verified_programs(correct_only=True)] == [COUNTS]


def test_with_one_build_scene_there_is_no_other_scene_to_check(tmp_path, clevr):
    dataset, modules, build = clevr
    alone = [q for q in build if q.image_id == _question(build, "78").image_id]
    checker = SceneChecker(lambda code, ns: execute(code, ns, timeout_s=10), dataset, modules, build_scenes(alone))
    assert checker.check(_question(build, "78"), CONSTANT_NO, []) is None


def test_library_check_programs_says_why_nothing_was_checked(tmp_path, clevr, monkeypatch):
    from typer.testing import CliRunner

    from vadar.cli import app

    monkeypatch.setenv("VADAR_HOME", str(tmp_path))
    ApiStore(tmp_path / "vadar.sqlite").close()
    result = CliRunner().invoke(app, ["library", "check-programs", "--data", str(clevr[0].root), "--split", "dev"])
    assert result.exit_code == 0, result.output
    assert "no build run of this library was given" in result.output


def test_a_program_checked_on_fewer_scenes_than_now_apply_is_checked_again(tmp_path, clevr):
    """A later batch brings build scenes: a program checked on one scene is run on the new ones."""
    dataset, modules, build = clevr
    question = _question(build, "78")
    first_batch = [q for q in build if q.image_id in {question.image_id, "CLEVR_train_000005"}]

    def checker(questions):
        return SceneChecker(lambda code, ns: execute(code, ns, timeout_s=10), dataset, modules,
                            build_scenes(questions))

    with ApiStore(tmp_path / "lib.sqlite") as store:
        store.record_verified_program(batch_id=None, question_id="78", question=question.question, variant="build",
                                      code=COUNTS, answer="no", gold="no", error=None, correct=True, uses=[])
        assert check_right_programs(store, checker(first_batch), build) == (1, 0)
        assert store.verified_programs()[0].other_scenes.checked == 1
        assert check_right_programs(store, checker(first_batch), build) == (0, 0)  # nothing new to check on
        assert check_right_programs(store, checker(build), build) == (1, 0)  # more scenes now
        assert store.verified_programs()[0].other_scenes.checked == 4
        assert check_right_programs(store, checker(build), build) == (0, 0)
