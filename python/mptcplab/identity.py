"""The identity corpus: every committed scenario's outputs, saved and compared bit for bit.

Refactors and speed work must leave every result unchanged; a model change must say
which results move. This module runs every scenario file under ``scenarios/`` and the
benchmark scenarios, with two seeds each and a short duration, and keeps for each run
one canonical text per table (every column and every float as its shortest round-trip
repr, so two outputs are equal exactly when their values are) plus the per-packet trace
of the first few scenarios. The scenarios of ``scenarios/validate/`` run a second time as
``validate`` runs them against the kernel (the upstream profile, ``sim_side``), so a change
of the upstream model shows too. ``save DIR`` writes the corpus; ``check DIR`` runs it again
and lists every output that differs, with the first differing line:

    python -m mptcplab.identity save target/identity        # on the base commit
    python -m mptcplab.identity check target/identity       # after the change

(``./dev identity save|check [DIR]`` does the same after installing.) The corpus is a
directory of text files, one per scenario, seed and table, so `diff -r` works on it too.
Scenarios that do not load (a stale file) are listed, not hidden.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SEEDS = (1, 2)
DURATION_S = 10.0      # each run is cut to this many simulated seconds
TRACED = 3             # the first N scenarios (sorted) also keep their per-packet trace


def scenario_files(root: Path = REPO) -> list[Path]:
    """Every scenario file the project commits: scenarios/**/*.toml and the benchmark's."""
    # scenarios/sweeps holds sweep plans, not scenarios.
    files = sorted(p for p in (root / "scenarios").rglob("*.toml") if "sweeps" not in p.relative_to(root).parts)
    # The benchmark's, htsim's S1 and S2 included (data/bench/htsim/; S3 is generated).
    files += sorted((root / "python" / "mptcplab" / "data" / "bench").rglob("*.toml"))
    return files


def _canonical(df) -> str:  # noqa: ANN001 - a pandas DataFrame
    """One line per row, columns in order, floats as repr (exact round trip)."""
    cols = list(df.columns)
    lines = ["\t".join(cols)]
    for row in df.itertuples(index=False, name=None):
        lines.append("\t".join(repr(v) if isinstance(v, float) else str(v) for v in row))
    return "\n".join(lines) + "\n"


def runs(root: Path = REPO) -> list[tuple[Path, str | None]]:
    """(scenario file, profile): every file as it is, and the validate scenarios upstream too."""
    files = scenario_files(root)
    return [(p, None) for p in files] + [(p, "upstream") for p in files
                                         if p.parent == root / "scenarios" / "validate"]


def outputs(path: Path, seed: int, trace: bool, profile: str | None = None) -> Iterator[tuple[str, str]]:
    """(name, text) of every output of one run (`profile`: as `validate` runs it)."""
    import mptcplab
    from mptcplab.result import TABLES

    from .scenario import Scenario

    scn = Scenario.from_toml(path)
    if profile is not None:
        from .kernel.validate import sim_side

        scn, _ = sim_side(scn, profile)
    dur = DURATION_S
    with tempfile.TemporaryDirectory() as tmp:
        tfile = Path(tmp) / "trace.csv"
        res = mptcplab.simulate(scn, seed=seed, duration=dur, trace=tfile if trace else None)
        for name in TABLES:  # a table the run does not have comes back empty
            yield name, _canonical(res.table(name))
        meta = {k: v for k, v in res.meta.items() if k not in ("wall_s", "version", "model")}
        yield "meta", json.dumps(meta, sort_keys=True, default=str) + "\n"
        if trace and tfile.exists():
            yield "trace", tfile.read_text(encoding="utf-8")


def _key(path: Path, root: Path) -> str:
    return str(path.relative_to(root)).replace("/", "__").removesuffix(".toml")


def run_corpus(out: Path, root: Path = REPO) -> tuple[dict[str, str], list[str]]:
    """Write the corpus into `out`; return ({file: sha256}, [scenarios that failed])."""
    out.mkdir(parents=True, exist_ok=True)
    digests: dict[str, str] = {}
    failed: list[str] = []
    for i, (path, profile) in enumerate(runs(root)):
        key = _key(path, root) + (f"+{profile}" if profile else "")
        for seed in SEEDS:
            try:
                items = list(outputs(path, seed, trace=i < TRACED, profile=profile))
            except Exception as err:  # noqa: BLE001 - listed, not hidden
                failed.append(f"{key} (seed {seed}): {type(err).__name__}: {err}")
                continue
            for name, text in items:
                fname = f"{key}.seed{seed}.{name}.txt"
                (out / fname).write_text(text, encoding="utf-8")
                digests[fname] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    (out / "MANIFEST.json").write_text(json.dumps({"files": digests, "failed": failed}, indent=1, sort_keys=True)
                                       + "\n", encoding="utf-8")
    return digests, failed


def _first_difference(a: str, b: str) -> str:
    for n, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), 1):
        if x != y:
            return f"line {n}: {x[:120]!r} -> {y[:120]!r}"
    return f"length {len(a.splitlines())} -> {len(b.splitlines())} lines"


def check(saved: Path, root: Path = REPO) -> int:
    """Run the corpus again and compare with `saved`; 0 when every output is identical."""
    try:
        manifest = json.loads((saved / "MANIFEST.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        print(f"error: {saved}: no corpus to check against ({err}); run `save` first", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        now, failed = run_corpus(Path(tmp), root)
        # The saved files are the corpus: hash what is on disk, not what the manifest says.
        before = {k: hashlib.sha256((saved / k).read_bytes()).hexdigest() if (saved / k).exists() else ""
                  for k in manifest["files"]}
        moved = sorted(k for k in before.keys() & now.keys() if before[k] != now[k])
        gone, new = sorted(before.keys() - now.keys()), sorted(now.keys() - before.keys())
        for k in moved:
            print(f"differs: {k}: {_first_difference((saved / k).read_text(), (Path(tmp) / k).read_text())}")
        for k in gone:
            print(f"missing now: {k}")
        for k in new:
            print(f"new: {k}")
    for f in failed:
        print(f"failed: {f}")
    same = len(before.keys() & now.keys()) - len(moved)
    print(f"{same} of {len(before)} saved outputs identical; {len(moved)} differ, {len(gone)} missing, "
          f"{len(new)} new, {len(failed)} runs failed")
    return 0 if not (moved or gone or new) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mptcplab.identity", description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=("save", "check"))
    ap.add_argument("dir", nargs="?", default=str(REPO / "target" / "identity"))
    args = ap.parse_args(argv)
    if args.action == "save":
        digests, failed = run_corpus(Path(args.dir))
        for f in failed:
            print(f"failed: {f}")
        print(f"saved {len(digests)} outputs of {len(runs())} scenario runs x {len(SEEDS)} seeds "
              f"into {args.dir}")
        return 0
    return check(Path(args.dir))


if __name__ == "__main__":
    sys.exit(main())
