"""The boundary every generated program crosses: `execute(code, namespace) -> ExecutionResult`.

Programs and library functions are compiled with RestrictedPython under `policy` and run in a
separate, resource-limited interpreter (`worker`); this process enforces the wall-clock limit and
runs the host functions (perception modules) a program calls. `pool` keeps one sandbox per thread
for parallel questions. Only the names below are for use outside this package; `codec`, `calls`,
`crash`, `stderr` and `worker` are its internals. See docs/sandbox.md.
"""

from vadar.sandbox.executor import (
    ExecutionResult,
    HostCall,
    LibraryFunction,
    Sandbox,
    default_sandbox,
    execute,
)
from vadar.sandbox.library_source import LibrarySourceError, check_library_policy, check_library_source
from vadar.sandbox.policy import reserved_name
from vadar.sandbox.pool import SandboxPool

__all__ = [
    "ExecutionResult",
    "HostCall",
    "LibraryFunction",
    "LibrarySourceError",
    "Sandbox",
    "SandboxPool",
    "check_library_policy",
    "check_library_source",
    "default_sandbox",
    "execute",
    "reserved_name",
]
