"""vadar as a library: open a configured vadar, solve questions, build and evaluate, read the library.

    import vadar

    with vadar.open() as v:                        # embedded model, oracle modules
        solution = v.solve(image, "How many cylinders are there?", scene=scenes_file)
        solution.answer, solution.program, solution.calls
        v.evaluate(limit=6)                       # the built-in CLEVR sample -> Evaluation
        v.library.list()

`vadar/__init__.py` exposes these names lazily, so `import vadar` stays light (the sandbox's
worker process imports the package too). docs/python.md describes the whole surface.
"""

from vadar.app.evaluation import Ablation, Build, Evaluation
from vadar.app.instance import Vadar
from vadar.app.opening import Announcements, open
from vadar.app.library import FunctionDetails, Library, LibraryEntry, LibraryError, PredefinedModule
from vadar.app.solution import Call, Solution, Tokens
from vadar.runs.progress import LiveProgress, Progress

__all__ = ["Ablation", "Announcements", "Build", "Call", "Evaluation", "FunctionDetails", "Library", "LibraryEntry",
           "LibraryError", "LiveProgress", "PredefinedModule", "Progress", "Solution", "Tokens", "Vadar", "open"]
