"""The Signature agent's request stays within what the model reads, however large the library and
however many helpers were tried before: the library is fitted as every Program-agent request is
(`helper_rules.fit_library`), the remembered rejections are capped (`signature.shown_tried`)."""

from __future__ import annotations

from api_store import ApiStore
from test_library_admission import build, config, scripted  # noqa: F401 (config: a fixture)
from left_of_helpers import RIGHT
from vadar.agents.signature import MAX_TRIED_CHARS
from vadar.library.gate import admit_as_given
from vadar.llm.chat import Role
from vadar.programs.helper_rules import MAX_LIBRARY_STUB_CHARS


def test_the_signature_request_is_bounded_for_a_large_library(config, tmp_path):  # noqa: F811 (the fixture)
    config.paths.home.mkdir(parents=True)
    with ApiStore(config.paths.database) as store:
        for k in range(60):  # 60 helpers of 1,500-character docstrings: 90,000 characters of stubs
            name = f"_measure_number_{k}"
            store.propose(name, "(image: Image, bbox: BBox) -> float", f"Measure {k}. " + "Long words. " * 125)
            store.implement(name, f"def {name}(image, bbox):\n    return {k}.0\n")
            admit_as_given(store, [name], mode="hand")
    llm = scripted([RIGHT])
    build(config, llm, tmp_path)
    proposing = llm.calls_of(Role.SIGNATURE)
    assert proposing
    size = sum(len(message["content"]) for message in proposing[0])
    assert size < MAX_LIBRARY_STUB_CHARS + MAX_TRIED_CHARS + 10_000, size  # 99,192 characters before
