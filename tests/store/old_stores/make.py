"""Make the old stores the upgrade test reads: for each schema version, a store written by the code
of the commit that made that version, as a SQL dump (vN.sql) and what that code read back (vN.json).

    python tests/store/old_stores/make.py 10          # the store of schema version 10
    python tests/store/old_stores/make.py --all       # every version again
    python tests/store/old_stores/make.py 10 --commit abc1234   # made by another commit

The commit of version N is the first commit of schema.py's history (on the branch checked out)
whose MIGRATIONS has N entries, each the same as today's: a version that only ever existed on
another branch, with other migrations, is not one a person's store can be at. Each commit is
checked out in a throwaway `git worktree` under the temporary folder, and fill.py runs against
its own Store API there (with this interpreter and the packages installed beside it). The table in
README.md is written again from the vN.json files.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SCHEMA = "poppy_tui/agent/store/schema.py"
TABLE_START = "<!-- versions: written by make.py -->"
TABLE_END = "<!-- end of versions -->"


def _git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def migrations_at(rev: str) -> tuple[str, ...]:
    source = _git("show", f"{rev}:{SCHEMA}")
    namespace: dict[str, object] = {}
    exec(compile(source, f"{rev}:{SCHEMA}", "exec"), namespace)
    return tuple(namespace["MIGRATIONS"])  # type: ignore[arg-type]


def commit_of(version: int) -> str:
    today = migrations_at("HEAD")
    if version > len(today):
        raise SystemExit(
            f"schema.py at HEAD has {len(today)} migrations, not {version}: commit it first"
        )
    for rev in _git("rev-list", "--reverse", "HEAD", "--", SCHEMA).split():
        found = migrations_at(rev)
        if len(found) == version and found == today[:version]:
            return rev
    raise SystemExit(
        f"no commit has exactly migrations 1-{version} as today's: version {version} never "
        "existed on its own (a merge brought it in with the next one); there is no store to make"
    )


def make(version: int, commit: str | None = None) -> Path:
    commit = commit or commit_of(version)
    subject = _git("log", "-1", "--format=%h %ad %s", "--date=short", commit).strip()
    print(f"v{version}: {subject[:100]}", flush=True)
    with tempfile.TemporaryDirectory(prefix=f"poppy-old-v{version}-") as scratch:
        checkout = Path(scratch) / "checkout"
        _git("worktree", "add", "--detach", "--quiet", str(checkout), commit)
        try:
            store_file = Path(scratch) / "data" / "poppy.db"
            store_file.parent.mkdir()
            read_back = Path(scratch) / "read_back.json"
            subprocess.run(
                [
                    sys.executable,
                    str(HERE / "fill.py"),
                    str(checkout),
                    str(store_file),
                    str(read_back),
                ],
                check=True,
                cwd=scratch,
            )
            made = json.loads(read_back.read_text())
            if made["version"] != version:
                raise SystemExit(
                    f"{commit} made a store at version {made['version']}, not {version}"
                )
            db = sqlite3.connect(store_file)
            try:
                user_version = db.execute("PRAGMA user_version").fetchone()[0]
                dump = "\n".join(db.iterdump())
            finally:
                db.close()
        finally:
            _git("worktree", "remove", "--force", str(checkout))
    assert user_version == version, (user_version, version)
    made["commit"] = _git("rev-parse", commit).strip()
    made["made_by"] = subject
    (HERE / f"v{version}.sql").write_text(
        f"-- A poppy-tui store at schema version {version}, written by {made['commit'][:12]}\n"
        f"-- (tests/store/old_stores/make.py; do not edit: make it again).\n"
        f"PRAGMA user_version={version};\n{dump}\n"
    )
    (HERE / f"v{version}.json").write_text(
        json.dumps(made, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    )
    return HERE / f"v{version}.sql"


def write_table() -> None:
    rows = ["| version | made by (commit, date, subject) |", "| ---: | --- |"]
    for path in sorted(HERE.glob("v*.json"), key=lambda p: int(p.stem[1:])):
        made = json.loads(path.read_text())
        rows.append(f"| {made['version']} | `{made['made_by'][:110]}` |")
    readme = HERE / "README.md"
    text = readme.read_text()
    start, end = text.index(TABLE_START), text.index(TABLE_END)
    readme.write_text(text[: start + len(TABLE_START)] + "\n" + "\n".join(rows) + "\n" + text[end:])


def every_version() -> list[int]:
    today = migrations_at("HEAD")
    made = []
    for version in range(1, len(today) + 1):
        try:
            commit_of(version)
        except SystemExit as skipped:
            print(f"v{version}: skipped: {skipped}")
            continue
        made.append(version)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("versions", nargs="*", type=int, help="schema versions to make")
    parser.add_argument("--all", action="store_true", help="every version of today's schema.py")
    parser.add_argument("--commit", help="the commit whose code makes the store (one version only)")
    args = parser.parse_args(argv)
    versions = every_version() if args.all else args.versions
    if not versions:
        parser.error("name a version, or --all")
    if args.commit and len(versions) != 1:
        parser.error("--commit makes one version")
    for version in versions:
        print(f"  wrote {make(version, args.commit).relative_to(REPO)}")
    write_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
