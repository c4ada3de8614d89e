"""A second request for a helper whose code is right but whose docstring leaves out a parameter.

The Program agent reads only a helper's name and docstring, so a docstring that says nothing of a
parameter invites misuse and is refused. But refusing the whole reply throws away code that already
reproduced every answer, and asking for the whole reply again often brings back new errors. So the
code is kept and only a new docstring is asked for, in a short request of its own.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from vadar import prompts
from vadar.programs.code_extract import NoCodeError, extract_code
from vadar.programs.sampling import Sampling
from vadar.programs.step_loop import Reply, StepLoop, Verdict
from vadar.library.rules import silent_parameter
from vadar.llm.chat import ChatModel, Message, Role

DOCSTRING = Sampling(max_tokens=120)
MAX_CHARS = 400  # a docstring is one or two sentences


def reply_docstring(text: str) -> str:
    """The docstring in a reply: a `def`'s docstring, a quoted string, or the plain sentence.

    Raises ValueError with what to say to the LLM when the reply holds none.
    """
    try:
        code = extract_code(text)
    except NoCodeError:
        code = text
    try:
        tree = ast.parse(code)
    except SyntaxError:
        tree = None
    found = None
    if tree is not None:
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        if defs:
            found = ast.get_docstring(defs[0])
        elif len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
            found = str(tree.body[0].value.value)
    sentence = " ".join((found if found is not None else text.strip().strip("`").strip('"\'')).split())
    if not sentence:
        raise ValueError("the reply holds no docstring: reply with one sentence")
    if len(sentence) > MAX_CHARS:
        raise ValueError(f"the docstring is {len(sentence)} characters long: write one sentence")
    return sentence


def redocument(llm: ChatModel, system: Message, helper_code: str, name: str, parameters: Sequence[str],
               problem: str, attempts: int = 2) -> str | None:
    """A docstring for `helper_code` that names every parameter, or None if the LLM gives none."""
    written: list[str] = []

    def judge(reply: Reply) -> Verdict:
        try:
            docstring = reply_docstring(reply.text)
        except ValueError as exc:
            return Verdict.retry(prompts.render("group_docstring_retry", error=str(exc)))
        silent = silent_parameter(parameters, docstring)
        if silent:
            return Verdict.retry(prompts.render("group_docstring_retry", error=silent))
        written.append(docstring)
        return Verdict.accept()

    request = prompts.render("group_docstring", helper=helper_code, name=name, problem=problem,
                             parameters=[p for p in parameters if p != "image"])
    StepLoop(llm, DOCSTRING, attempts, role=Role.GROUP_DOCSTRING).run([system, {"role": "user", "content": request}], judge)
    return written[0] if written else None
