#!/usr/bin/env python3
"""The lessons' tables of measured figures against the shipped results (plots/lesson_tables.py).

    python3 tests/test_lesson_tables.py REPO_ROOT

- every table in the lessons is what its results file makes now (the real check);
- on a copy of the lessons and results files: a figure changed by hand in a table, or a figure
  changed in a results file, is reported naming the lesson and the table, and exits 1; --write
  puts the table right and leaves every other line of the lesson as it was;
- a table of an unknown name, or one with no end marker, exits 2 naming the line;
- a figure of the README's stage table that the results no longer give is named, row and figure;
- a bench that writes a quoted results file says which tables and rows no longer match it;
- a results file or figure that a lesson names and the repository lacks is named, with the lesson.

Exit status 0: all passed; 1: a test failed.
"""
import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT / "plots"))
import lesson_tables  # noqa: E402

failures = []


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures.append(name)


def run(root, *args):
    """lesson_tables' exit code and output for a repository at `root`."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = lesson_tables.main([str(root), *args])
    return code, out.getvalue()


def copy_of_repo(tmp):
    """The lessons and the results files they quote, in a folder of their own (the other files they
    name, empty: only their presence is checked)."""
    for path in lesson_tables.lessons(ROOT):
        (tmp / path.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, tmp / path.relative_to(ROOT))
    for _, name in lesson_tables.named_files(ROOT):
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).touch()
    for f in lesson_tables.QUOTED:
        (tmp / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f, tmp / f)
    return tmp


def main():
    code, out = run(ROOT)
    check("the shipped lessons' tables match the shipped results", code == 0, out)
    names = [name for path in lesson_tables.lessons(ROOT)
             for name, _, _ in lesson_tables.regions(path.read_text(encoding="utf-8"), path)[1]]
    check("every table the script makes is in a lesson, once", sorted(names) == sorted(lesson_tables.TABLES), names)

    lesson = Path("chapters/08_temporal_blocking/README.md")
    with tempfile.TemporaryDirectory() as t:
        tmp = copy_of_repo(Path(t))
        shipped = (tmp / lesson).read_text(encoding="utf-8")
        # A figure edited by hand inside the table fused_pairs.
        row = next(line for line in shipped.split("\n") if line.startswith("| Neumann |") and "→" in line)
        ratio = row.split("|")[2].split()[0]  # the float column's speed-up, e.g. 1.68×
        edited = row.replace(ratio, "9.99×", 1)
        (tmp / lesson).write_text(shipped.replace(row, edited), encoding="utf-8")
        code, out = run(tmp)
        check("a figure edited in a table: exit 1", code == 1, out)
        check("... naming the lesson and the table", f"{lesson}: table fused_pairs differs" in out, out)
        check("... showing the lesson's line and the file's", edited in out and row in out, out)
        code, out = run(tmp, "--write")
        check("--write puts the table right, and only it", code == 0 and (tmp / lesson).read_text(encoding="utf-8") == shipped,
              out)

        # A results file that a lesson names, renamed or deleted.
        where, gone = next((w, n) for w, n in lesson_tables.named_files(ROOT) if n not in lesson_tables.QUOTED)
        (tmp / gone).unlink()
        code, out = run(tmp)
        check("a file a lesson names, gone: exit 1 naming the lesson and the file",
              code == 1 and f"{where} names {gone}, which is not in the repository" in out, out)
        (tmp / gone).touch()

        # A figure changed in the results file: stage 07's step at N = 512 twice as long.
        main_file = tmp / lesson_tables.MAIN
        doc = json.loads(main_file.read_text(encoding="utf-8"))
        for r in doc["heat"]["runs"]:
            if (r["n"], r["bc"], r["precision"]) == (512, "neumann", "float"):
                r["step_ms"]["median"] *= 2
        main_file.write_text(json.dumps(doc), encoding="utf-8")
        code, out = run(tmp)
        check("a figure changed in the results: the table quoting it is stale",
              code == 1 and "chapters/07_heat_equation/README.md: table heat_n512 differs" in out, out)
        lines = lesson_tables.after_writing(tmp, main_file)
        check("a bench that wrote the file says so", any("heat_n512" in line for line in lines)
              and any("--write" in line for line in lines), lines)
        check("... and nothing for a file no lesson quotes",
              lesson_tables.after_writing(tmp, tmp / "plots/results/other-gpu.json") == [])

        # A figure of the README's stage table that the results no longer give.
        readme = (tmp / "README.md").read_text(encoding="utf-8")
        phrase = lesson_tables.stage_table_phrases(tmp)["| [06 the roofline]"][0]
        (tmp / "README.md").write_text(readme.replace(phrase, "| 12.3%, 4.56× |"), encoding="utf-8")
        code, out = run(tmp, "--write")
        check("a stage-table figure gone from the README: exit 1 naming the row and the figure, --write or not",
              code == 1 and f"row '06 the roofline' should say '{phrase}'" in out, out)
        check("... and a bench says so", any("06 the roofline" in line
                                             for line in lesson_tables.after_writing(tmp, main_file)))
        (tmp / "README.md").write_text(readme, encoding="utf-8")

        bad = tmp / "chapters/01_x/README.md"
        bad.parent.mkdir(parents=True)
        begin = "<!-- table {}: made from the shipped results by plots/lesson_tables.py -->"
        bad.write_text("text\n" + begin.format("no_such_table") + "\n| a |\n<!-- end table -->\n", encoding="utf-8")
        code, out = run(tmp)
        check("a table of an unknown name: exit 2 naming the line",
              code == 2 and "chapters/01_x/README.md:2: no table is named 'no_such_table'" in out, out)
        bad.write_text(begin.format("heat_n512") + "\n| a |\n", encoding="utf-8")
        code, out = run(tmp)
        check("a table with no end marker: exit 2 naming the line",
              code == 2 and "chapters/01_x/README.md:1: the table 'heat_n512' has no" in out, out)

    if failures:
        print(f"{len(failures)} test(s) failed: {', '.join(failures)}")
        return 1
    print("all lesson-table tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
