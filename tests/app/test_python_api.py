"""`import vadar` as a library: open, solve, evaluate, build and the library object, with a scripted
LLM on the built-in CLEVR sample (the command line's own tests run through the same calls)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import vadar
from base_modules.registry import BackendError
from omni3d_bench import sample_path
from omni3d_bench.types import DatasetError
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.results import ResultsFile
from scripted_jobs import count_helper_router, looking_program_of_its_kind

ROOT = sample_path()
SCENES = next((ROOT / "scenes").glob("*.json"))
IMAGE = ROOT / "images" / json.loads(SCENES.read_text())["scenes"][0]["image_filename"]
COUNT = "```python\nboxes = loc(image, 'cylinder')\nfinal_result = len(boxes)\n```"


def test_import_vadar_stays_light_and_names_the_api():
    loaded = subprocess.run([sys.executable, "-c", "import sys, vadar; "
                             "print(sorted(m for m in sys.modules if m.startswith('vadar')))"],
                            capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['vadar']"  # the sandbox worker imports the package: nothing else may come with it
    assert vadar.open is vadar.app.open and vadar.Solution.__name__ == "Solution" and vadar.__version__
    assert {"open", "Vadar", "Solution", "Evaluation", "Library"} <= set(dir(vadar))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        vadar.nothing  # noqa: B018


def test_solve_returns_the_answer_program_calls_and_cost(tmp_path):
    llm = ScriptedLLM([COUNT])
    with vadar.open(home=tmp_path / "home", llm=llm) as v:
        assert "not started" in repr(v) and v.backends["loc"] == "oracle"
        solution = v.solve(IMAGE, "How many cylinders are there?", scene=SCENES)
        pool, store = v.session.sandboxes, v.session.store
        assert pool.size == 1
    assert solution.ok and solution.answer == 2 and solution.error is None
    assert solution.program.startswith("boxes = loc(image, 'cylinder')")
    (call,) = solution.calls
    assert call.name == "loc" and call.args[1] == "cylinder" and len(call.boxes) == 2 and call.frames == (0,)
    assert str(call).startswith("loc('cylinder') -> [[")
    assert solution.attempts == 1 and solution.tokens.total > 0 and solution.seconds > 0
    assert solution.images == (IMAGE,) and solution.question == "How many cylinders are there?"
    assert repr(solution).startswith("Solution(answer=2, 1 module calls, 1 LLM reply, ")
    # the context manager released the sandbox workers and the store
    assert pool.size == 0
    with pytest.raises(Exception, match="closed"):
        store.functions()


def test_a_solution_shows_itself_as_the_solve_page(tmp_path):
    with vadar.open(home=tmp_path / "home", llm=ScriptedLLM([COUNT])) as v:
        solution = v.solve(str(IMAGE), "How many <b>cylinders</b>?", scene=str(SCENES))
    page = solution.html()
    assert page.startswith("<!DOCTYPE html>") and "How many &lt;b&gt;cylinders&lt;/b&gt;?" in page
    assert 'src="data:image/jpeg;base64,' in page and page.count('class="call"') == 1
    framed = solution._repr_html_()
    assert framed.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;') and 'sandbox="allow-scripts"' in framed
    # the page's script runs inside the frame; beside it, only the listener that grows the frame to its page
    beside = framed.split("</iframe>", 1)[1]
    assert framed.count("<script>") == 1 and beside.startswith("<script>") and "vadarPageHeight" in beside
    saved = solution.save_html(tmp_path / "page.html")
    assert saved.read_text(encoding="utf-8") == page


def test_bad_input_fails_before_any_model_starts(tmp_path):
    llm = ScriptedLLM([COUNT])
    with vadar.open(home=tmp_path / "home", llm=llm) as v:
        with pytest.raises(DatasetError, match="image file not found"):
            v.solve(tmp_path / "absent.png", "How many?", scene=SCENES)
        with pytest.raises(DatasetError, match="no scene annotation"):
            v.solve(IMAGE, "How many?")
        with pytest.raises(vadar.ConfigError, match="unknown method"):
            v.evaluate(method="telepathy")
        assert "not started" in repr(v)
    assert llm.calls == []
    with pytest.raises(vadar.ConfigError, match="dpeth"):
        vadar.open(modules={"dpeth": "real"})
    with vadar.open(modules="nonexistent-plugin", home=tmp_path / "home", llm=llm) as v:
        with pytest.raises(BackendError, match="nonexistent-plugin"):
            v.solve(IMAGE, "How many?", scene=SCENES)
    assert llm.calls == []


def test_evaluate_writes_and_returns_what_vadar_eval_writes(tmp_path):
    with vadar.open(home=tmp_path / "home", llm=ScriptedLLM([looking_program_of_its_kind] * 3)) as v:
        evaluation = v.evaluate(limit=3, method="static-api", out=tmp_path / "run")
    assert evaluation.out_dir == tmp_path / "run" and evaluation.method == "static-api"
    written = ResultsFile(tmp_path / "run" / "results.jsonl").read()
    assert evaluation.results == written and len(written) == 3 == evaluation.questions
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["accuracy"]["total"] == evaluation.accuracy
    assert repr(evaluation).startswith(f"Evaluation({tmp_path / 'run'}: static-api, 3 questions, accuracy ")
    page = evaluation.html()
    assert all(f'id="q-{r.question_id}"' in page for r in written) and "data:image/jpeg;base64," in page
    assert evaluation._repr_html_().startswith("<iframe srcdoc=")
    assert evaluation.report().is_file()


def test_build_grows_the_library_and_the_library_object_reads_it(tmp_path, monkeypatch):
    monkeypatch.setenv("VADAR_LIBRARY_ADMISSION", "off")  # admission has its own tests
    with vadar.open(home=tmp_path / "home", llm=ScriptedLLM([count_helper_router] * 50)) as v:
        built = v.build(limit=2, batch_size=2, out=tmp_path / "build")
        library = v.library
    assert built.implemented == ["_count"] and built.functions == 1 and "1 functions implemented" in repr(built)
    assert [entry.name for entry in library.list()] == ["_count"] and "_count" in library and len(library) == 1
    details = library.show("_count")
    assert details.current.code.startswith("def _count(") and details.history[0].version == 1
    assert library.show("LOC").name == "loc" and "def loc(" in library.show("loc").stub
    with pytest.raises(vadar.LibraryError, match="no function named '_nothing'"):
        library.show("_nothing")
    added = library.add('def _double(x: float) -> float:\n    """Twice x."""\n    return 2 * x\n')
    assert added == ["_double"] and [e.name for e in library] == ["_count", "_double"]
    exported = library.export(tmp_path / "library.json")
    assert [f["name"] for f in exported["functions"]] == ["_count", "_double"]
    assert json.loads((tmp_path / "library.json").read_text()) == json.loads(json.dumps(exported))
    assert vadar.Library(tmp_path / "elsewhere.db").list() == []  # no library yet: empty, and not created
    assert not (tmp_path / "elsewhere.db").exists()


def test_open_takes_a_config_file_and_leaves_a_given_config_alone(tmp_path):
    toml = tmp_path / "vadar.toml"
    toml.write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\n[modules]\ndepth = "real"\n')
    v = vadar.open(toml, home=tmp_path / "home")
    assert v.config.llm.base_url == "http://127.0.0.1:9/v1" and v.backends["depth"] == "real"
    config = vadar.VadarConfig()
    opened = vadar.open(config, base_url="http://127.0.0.1:9/v1", modules={"depth": "real"})
    assert config.llm.base_url is None and opened.config.llm.base_url == "http://127.0.0.1:9/v1"
    assert opened.backends["depth"] == "real" and opened.backends["loc"] == "oracle"
    assert Path(opened.library.path) == opened.config.paths.database
