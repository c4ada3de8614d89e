"""`vadar.open()`: the settings from a file or an object, then the keywords, checked at once; the
`Vadar` it returns starts nothing until a call needs it."""

from __future__ import annotations

import copy
import sys
from collections.abc import Mapping
from pathlib import Path

from base_modules.registry import BackendError, backend_name, parse_assignment
from vadar.app.arguments import PATH_TYPES, check_path, check_type
from vadar.app.instance import PathLike, Vadar
from vadar.config import ConfigError, VadarConfig, check_config, load_config
from vadar.llm.chat import ChatModel
from vadar.runs.progress import Progress


def open(config: VadarConfig | PathLike | None = None, *, base_url: str | None = None,  # noqa: A001
         model: str | None = None, modules: str | Mapping[str, str] | None = None,
         home: PathLike | None = None, llm: ChatModel | None = None,
         progress: Progress | None = None, quiet: bool = False) -> Vadar:
    """A configured vadar: the settings from `config` (a `VadarConfig`, or a TOML file; default:
    `$VADAR_CONFIG`, `vadar.toml`, `VADAR_*` variables), then these keywords:

    - `base_url`, `model`: an OpenAI-compatible endpoint instead of the embedded model;
    - `modules`: the backend of every perception module (`"oracle"`, `"real"`, a plugin name), or
      a backend per module (`{"depth": "real"}`);
    - `home`: where the library and the response cache live (`VADAR_HOME`);
    - `llm`: any `ChatModel` to ask instead of an endpoint (a scripted one in tests);
    - `progress`: a `Progress` told what happens (the command line's live status); by default the
      lines worth keeping (the model assembled, the server started, a run resumed) go to stderr,
      and `quiet=True` drops them too.
    """
    check_type("config", config, (VadarConfig, *PATH_TYPES), optional=True, wanted="a VadarConfig or a TOML path")
    for name, text in (("base_url", base_url), ("model", model)):
        check_type(name, text, str, optional=True)
    check_type("modules", modules, (str, Mapping), optional=True, wanted="a backend name or {module: backend}")
    check_path("home", home, optional=True, error=ConfigError)
    check_type("quiet", quiet, bool)
    if isinstance(config, VadarConfig):
        settings = copy.deepcopy(config)
    else:
        check_path("config", config, optional=True, error=ConfigError, file=True)
        settings = load_config(Path(config) if config is not None else None)
    if base_url is not None:
        settings.llm.base_url = base_url
    if model is not None:
        settings.llm.model = model
    if home is not None:
        settings.paths.home = Path(home)
    overrides: dict[str, str] = {}
    try:
        if isinstance(modules, str):
            settings.modules.backend = backend_name(modules, slot="modules")
        elif modules is not None:
            for slot, backend in modules.items():
                check_type("each module of modules", slot, str)
                check_type(f"modules[{slot!r}]", backend, str)
            overrides = dict(parse_assignment(f"{slot}={backend}") for slot, backend in modules.items())
    except BackendError as exc:
        raise ConfigError(str(exc)) from None
    check_config(settings)  # a bad setting, given here or by hand, is one line now, not a failure later
    settings.modules.resolved(overrides)  # an unknown module or backend fails here, not later
    if progress is None:
        progress = Progress() if quiet else Announcements()
    return Vadar(settings, modules=overrides, llm=llm, progress=progress)


class Announcements(Progress):
    """Prints the lines worth keeping (the embedded model assembled and started, a run resumed) to
    stderr, so a first start that takes a minute is not silent; everything else stays quiet."""

    def announce(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)


