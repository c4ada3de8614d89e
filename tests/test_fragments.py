"""Statement-run patterns: what distillation may and may not turn into a helper."""

from __future__ import annotations

from vadar.library.fragments import find_patterns

API = {"loc", "depth", "vqa", "same_object", "get_2D_object_size"}

SHADOWING = '''cabinet = loc(image, "cabinet")[0]
cabinet_depth = depth(image, cabinet)
objects_depth = [depth(image, bbox) for bbox in loc(image, "object")]
final_result = sum(1 for depth in objects_depth if depth < cabinet_depth)
'''


def test_a_run_that_rebinds_a_module_name_is_no_pattern_and_does_not_stop_the_others():
    clean = ['{0} = loc(image, "{0}")[0]\nd = depth(image, {0})\nfinal_result = d\n'.format(name)
             for name in ("cup", "lamp", "table")]
    patterns = find_patterns([SHADOWING] * 3 + clean, API, min_programs=3)
    assert any(set(p.programs) == {3, 4, 5} for p in patterns), "the clean programs' shared run is still found"
    for pattern in patterns:
        for instance in pattern.instances:
            if instance.program < 3:  # no run of the shadowing program reaches its last statement
                assert instance.start + instance.length < 4
