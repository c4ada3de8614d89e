"""Search one helper against ground truth, alone: does the API agent's generate-and-test find a right
implementation of a named claim on a data set, with the conventions of this checkout?

Usage:
  python benchmarks/helper_search_once.py DATA NAME SIGNATURE DOCSTRING [--limit 30] [--samples 8] [--rounds 2]

Starts the configured endpoint (the embedded model by default), proposes NAME with SIGNATURE and
DOCSTRING in an in-memory store, implements it with the build's search settings and prints each
sample, the search record (samples sent, the passing sample, ground-truth cases) and the code kept.
"""

from __future__ import annotations

import argparse
from contextlib import closing
from pathlib import Path

from api_store import ApiStore
from vadar.agents.api import ApiAgent, TestContext
from vadar.agents.helper_search import SearchSettings
from vadar.config import load_config
from vadar.library.implementation_log import StoreLog
from vadar.library.truth_checks import TruthChecks, TruthVerifier
from vadar.llm.client import build_chat_model
from vadar.llm.embedded import open_endpoint
from vadar.programs.namespace import program_namespace
from vadar.runs.prepare import DataSelection
from vadar.runs.session import sandbox_executor, sandbox_pool


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("name")
    parser.add_argument("signature")
    parser.add_argument("docstring")
    parser.add_argument("--limit", type=int, default=30, help="questions whose scenes give the ground-truth cases")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    config = load_config()
    config.llm.cache = False
    data = DataSelection(data=args.data, limit=args.limit).prepare()
    store = ApiStore.memory()
    store.propose(args.name, args.signature, args.docstring)
    question = data.questions[0]
    context = TestContext(question.question, program_namespace(data.dataset.image(question), data.modules))
    with open_endpoint(config) as base_url, closing(sandbox_pool(config.sandbox)) as pool:
        executor = sandbox_executor(pool, config.sandbox)  # the configured limits, as a build's
        llm = build_chat_model(config, base_url=base_url)
        verifier = TruthVerifier(TruthChecks(executor), store, data.dataset, data.modules, data.questions)
        agent = ApiAgent(llm, store, log=StoreLog(store), executor=executor,
                         search=SearchSettings(samples=args.samples, rounds=args.rounds), verifier=verifier)
        agent.on_event = print
        report = agent.implement([args.name], [context])
    print("implemented", report.implemented, "failed", report.failed)
    for decision in store.decisions(args.name):
        if decision.decision == "searched":
            print({k: decision.evidence.get(k) for k in ("claim", "samples", "passed", "cases", "rounds")})
    print(store.current(args.name).code)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
