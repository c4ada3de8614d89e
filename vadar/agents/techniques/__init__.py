"""Reasoning techniques as writers wrapping the program writer (`compose` builds the chain).

`task` (what a writer is given), `writer` (the plain writer: write, run, repair one program),
`revise` (reviews and one revision), `vote`, `build_tries`, `constraint` (formalize),
`scene_tests` (unit tests), `priors` (size priors), `records` (reading their records back).
"""
