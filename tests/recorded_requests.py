"""The Program agent's requests recorded before the reasoning techniques existed, and the script
of replies they were recorded with (see tests/agents/test_options_off.py)."""

from pathlib import Path

RECORDED = Path(__file__).parent / "fixtures" / "program_requests_options_off.json"
SCRIPT = ["```python\nfinal_result = loc(image, 'thing')[99]\n```",
          "```python\nfinal_result = len(loc(image, 'thing'))\n```",
          "final_result = 5"]
