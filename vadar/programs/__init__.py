"""Program primitives shared by the agents, the library and the runs.

The step loop that asks the LLM and judges each reply, sampling settings, what answering one
question produced (`outcome`) and the reasoning techniques' typed records on it (`records`),
answers and their comparison, code extraction, the API text and stubs shown to the LLM, structured
replies, the question parsed once (`question_form`), test calls for new helpers and the namespace
a program runs in. Nothing here imports `vadar.agents`, `vadar.library` or `vadar.runs`: those
three build on this layer.
"""
