#!/usr/bin/env python3
"""No import cycles among the course's Python modules: every module in plots/ and course.py.

    python3 tests/test_imports.py REPO_ROOT

Reads each module with ast (nothing is imported or run), takes every import statement in it, at
the top or inside a function, that names another of these modules, and fails naming each cycle
found, two modules that import each other included. Before that it checks itself: on made-up
graphs, and on a copy of the modules in a temporary folder with a cycle planted in it (an import
inside a function, the kind a cycle hides in), which it must find.

Exit status 0: no cycle; 1: a cycle, or the self-check failed.
"""
import ast
import shutil
import sys
import tempfile
from pathlib import Path


def modules(root):
    """{module name: path}: plots/*.py under their own names (plots/ is on sys.path when they
    run), and course.py as "course"."""
    found = {p.stem: p for p in sorted((root / "plots").glob("*.py"))}
    course = root / "course.py"
    if course.exists():
        found["course"] = course
    return found


def imported_names(path):
    """The first component of every module that `path` imports, anywhere in the file."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
            else:  # from . import x: x is a module beside this one
                names.update(alias.name for alias in node.names)
    return names


def import_graph(root):
    """{module: set of the local modules it imports}."""
    local = modules(root)
    return {name: imported_names(path) & set(local) for name, path in local.items()}


def cycles(graph):
    """The cycles [a, b, ..., a] among modules that reach one another (a strongly connected
    component of two or more, or a module importing itself): the shortest through each module of
    such a group, each named once. [] when there are none."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def connect(v):  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            groups.append(group)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    found = []
    for group in groups:
        if len(group) == 1 and not group & set(graph.get(min(group), ())):
            continue
        for start in sorted(group):
            cycle = shortest_cycle(graph, start, group)
            first = cycle.index(min(cycle[:-1]))  # the same cycle from any module reads the same
            cycle = cycle[first:-1] + cycle[:first] + [cycle[first]]
            if cycle not in found:
                found.append(cycle)
    return sorted(found)


def shortest_cycle(graph, start, group):
    """[start, ..., start]: the shortest way back to `start` through the modules of `group`."""
    came_from, frontier = {start: None}, [start]
    while not any(start in graph.get(v, ()) for v in frontier):
        step = []
        for v in frontier:
            for w in sorted(set(graph.get(v, ())) & group):
                if w not in came_from:
                    came_from[w] = v
                    step.append(w)
        frontier = step
    path = [next(v for v in frontier if start in graph.get(v, ()))]
    while came_from[path[-1]] is not None:
        path.append(came_from[path[-1]])
    return list(reversed(path)) + [start]


def self_check(root):
    """The test must be able to fail: made-up graphs, then a planted cycle in a copy of the tree."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == [], "a chain is not a cycle"
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]], cycles({"a": {"b"}, "b": {"a"}})
    assert cycles({"a": {"a"}}) == [["a", "a"]], "a module importing itself"
    three = cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert three == [["a", "b", "c", "a"]], three
    two = cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c", "a"}})
    assert two == [["a", "b", "a"], ["c", "d", "c"]], two
    hub = cycles({"a": {"b", "c"}, "b": {"a"}, "c": {"a"}})  # one tangle, two cycles: both named
    assert hub == [["a", "b", "a"], ["a", "c", "a"]], hub
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp)
        shutil.copytree(root / "plots", copy / "plots", ignore=shutil.ignore_patterns("figures", "results"))
        if (root / "course.py").exists():
            shutil.copy(root / "course.py", copy / "course.py")
        (copy / "plots" / "planted_a.py").write_text("import json\n\n\ndef f():\n    from planted_b import g\n"
                                                    "    return g\n")
        (copy / "plots" / "planted_b.py").write_text("import planted_a as a\n")
        planted = cycles(import_graph(copy))
        assert ["planted_a", "planted_b", "planted_a"] in planted, f"the planted cycle was not found: {planted}"


def main(argv):
    root = Path(argv[1]).resolve() if len(argv) > 1 else Path(__file__).resolve().parent.parent
    try:
        self_check(root)
    except AssertionError as e:
        print(f"FAIL: the cycle finder's self-check: {e}")
        return 1
    graph = import_graph(root)
    for name in sorted(graph):
        print(f"{name} -> {', '.join(sorted(graph[name])) or '(none)'}")
    found = cycles(graph)
    for cycle in found:
        print("FAIL: import cycle: " + " -> ".join(cycle))
    if found:
        return 1
    print(f"no import cycles among the {len(graph)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
