"""Fixtures shared by several test files."""

import pytest

import base_modules.real
from base_modules.module import Loc
from base_modules.module import ModuleSet
from base_modules.oracle import clevr_oracle_modules
from omni3d_bench import sample_path
from omni3d_bench.datasets import load_dataset


class HalfBlindLoc(Loc):
    """A stand-in 'real' detector that misses every other object."""

    def __init__(self, inner):
        super().__init__(device="cpu")
        self.inner = inner

    def forward(self, image, object_prompt):
        return self.inner(image, object_prompt)[::2]


@pytest.fixture
def fake_real_modules(monkeypatch):
    """`real` modules without models: the sample's oracles, with a detector that misses every other object."""
    dataset = load_dataset(sample_path())

    def fake(config):
        oracle = clevr_oracle_modules(dataset.scene)
        return ModuleSet(HalfBlindLoc(oracle.loc), oracle.depth, oracle.vqa, oracle.same_object,
                         oracle.get_2D_object_size)

    monkeypatch.setattr(base_modules.real, "real_modules", fake)


@pytest.fixture
def server():
    """A scripted fake OpenAI-compatible server on 127.0.0.1, shut down after the test."""
    from llm_fake_server import FakeServer

    fake = FakeServer()
    fake.thread.start()
    yield fake
    fake.release.set()
    fake.httpd.shutdown()
    fake.httpd.server_close()


@pytest.fixture
def run_config(tmp_path):
    """A configuration for a short scripted run: home under tmp_path, one program attempt."""
    from vadar.config import VadarConfig

    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    config.sandbox.timeout_s = 20
    config.sandbox.memory_mb = 512
    config.agents.program_attempts = 1
    return config


@pytest.fixture(autouse=True, scope="session")
def no_real_embedded_server():
    """Starting the real embedded model fails at once, from the first fixture on (module-scoped ones
    too): a test that forgot its scripted LLM would otherwise pass slowly where the model is
    installed and fail where it is not. `live` tests lift this (`embedded_server_for_live_tests`)."""
    from vadar.llm.embedded import EmbeddedServer, EmbeddedServerError

    start = EmbeddedServer.start

    def refuse(port: int) -> list[str]:
        raise EmbeddedServerError("a test tried to start the embedded model server; give it a scripted "
                                  "LLM or mark it live")

    def refuse_the_model(self: EmbeddedServer) -> EmbeddedServer:
        if self._command_factory == self._default_command and self.model_path.is_file():
            self._command_factory = refuse  # after the port checks, where the model would start
        return start(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EmbeddedServer, "start", refuse_the_model)
        yield start


@pytest.fixture(autouse=True)
def embedded_server_for_live_tests(request, no_real_embedded_server, monkeypatch):
    """A `live` test starts the real model."""
    if request.node.get_closest_marker("live"):
        from vadar.llm.embedded import EmbeddedServer

        monkeypatch.setattr(EmbeddedServer, "start", no_real_embedded_server)
