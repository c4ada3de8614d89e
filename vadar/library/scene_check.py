"""Right on other scenes too: a build program's right answer checked where the question is asked again.

A build program that answers its question right becomes a worked example, a source to distil
helpers from, and evidence that the helpers it calls work. A yes/no answer is right half the time
by chance (`Are there more brown cylinders than purple cubes?` answered by counting purple things
with a helper about something else), and a count can match by coincidence. Where the data set
knows the question's answer on other scenes (`omni3d_bench.counterfactuals`), the program runs on
up to `limit` of the *build* scenes as well (never a scored question's scene), those whose answer
differs from its own first: one wrong answer there and it is no longer right.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from api_store import ApiStore, FunctionRecord
from api_store.evidence import SceneCheck, WrongScene
from base_modules.module import ModuleSet
from omni3d_bench.counterfactuals import on_other_scenes
from omni3d_bench.metrics import score_answer
from omni3d_bench.types import Dataset, Question
from vadar.programs.namespace import program_namespace
from vadar.programs.outcome import Executor, run_program


class SceneChecker:
    """Runs programs on other build scenes their question applies to."""

    def __init__(self, executor: Executor, dataset: Dataset, modules: ModuleSet, image_ids: Iterable[str],
                 limit: int = 4) -> None:
        self.executor, self.dataset, self.modules = executor, dataset, modules
        self.image_ids = sorted(set(image_ids))
        self.limit = limit

    def check(self, question: Question, code: str, library: Sequence[FunctionRecord]) -> SceneCheck | None:
        """What `code` answers on the other scenes; None when no other scene applies (or checks are off)."""
        if self.limit <= 0 or not code:
            return None
        cases = self.cases(question)
        if not cases:
            return None
        wrong = []
        for case in cases:
            namespace = program_namespace(self.dataset.image(case), self.modules, library, case.regions)
            run = run_program(self.executor, code, namespace)
            if run.error is not None:
                wrong.append(WrongScene(case.image_id, str(case.answer), None, " ".join(run.error.split())[:300]))
            elif score_answer(run.answer, case.answer, case.answer_type, case.metric) < 1.0:
                wrong.append(WrongScene(case.image_id, str(case.answer), str(run.answer)))
        return SceneCheck(len(cases), tuple(wrong))

    def applies(self, question: Question) -> bool:
        """Whether another build scene can check a program for `question` (checks on, a scene where it applies)."""
        return self.limit > 0 and next(on_other_scenes(self.dataset, question, self.image_ids, 1), None) is not None

    def case_count(self, question: Question) -> int:
        """How many other scenes `check` would run a program for `question` on now."""
        if self.limit <= 0:
            return 0
        return sum(1 for _ in on_other_scenes(self.dataset, question, self.image_ids, self.limit))

    def cases(self, question: Question) -> list[Question]:
        """Up to `limit` other scenes, those whose answer differs from the question's own first: a
        program that answers the same whatever the scene is caught by the first of them."""
        cases = list(on_other_scenes(self.dataset, question, self.image_ids))
        cases.sort(key=lambda case: str(case.answer) == str(question.answer))  # stable: scene order kept within
        return cases[:self.limit]


def build_scenes(questions: Iterable[Question]) -> set[str]:
    """The images of build questions: the only scenes a build program is checked on."""
    return {q.image_id for q in questions}


def check_right_programs(store: ApiStore, checker: SceneChecker, questions: Sequence[Question],
                         on_event: Callable[[str], None] | None = None) -> tuple[int, int]:
    """Run every right program of `questions` on other build scenes; those wrong there are no longer
    right. A program is checked again only when more scenes apply than it was checked on (a later
    batch brought build scenes; checked on 1 scene, a yes/no answer is still right by chance half
    the time). Returns (programs checked, found right by chance)."""
    by_id = {q.question_id: q for q in questions}
    library = store.library()
    names = {f.name for f in library}
    checked = chance = 0
    for program in store.verified_programs(correct_only=True):
        question = by_id.get(program.question_id)
        if question is None or not program.code:
            continue
        if program.other_scenes is not None and program.other_scenes.checked >= checker.case_count(question):
            continue
        if not set(program.uses) <= names:  # it called a candidate since refused: nothing learns from it
            continue
        result = checker.check(question, program.code, library)
        if result is None:
            continue
        store.record_other_scenes(program.id, result)
        checked += 1
        if not result.holds:
            chance += 1
            first = result.wrong[0]
            if on_event is not None:
                on_event(f"program #{program.id} for build question {question.question_id} was right by chance: "
                         f"on {first.image_id} it answered {first.answer or first.error!r}, gold {first.gold}")
    return checked, chance
