"""The result store of a sweep: one JSON file per finished point, written atomically.

    OUT/sweep.json                       manifest: plan name, versions that wrote here
    OUT/points/<hash>-seed<S>-v<V>.json  one finished point (key: scenario hash, seed, version)
    OUT/results.csv                      the gathered rows (rewritten at the end of a run)

A point file is written to a temporary name in the same directory, fsynced, renamed
over its final name and the directory fsynced: a reader (or a resumed sweep) sees the
whole file or none. Left-over temporary files from a killed run are removed on open.
"""
from __future__ import annotations

import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any

from ..errors import ScenarioError

__all__ = ["Store", "atomic_write", "VersionMixError"]

_POINT = re.compile(r"^(?P<hash>[0-9a-f]+)-seed(?P<seed>\d+)-v(?P<version>.+)\.json$")


class VersionMixError(ScenarioError):
    """The store holds points of another mptcplab version."""


def atomic_write(path: Path, data: bytes) -> None:
    path = Path(path)
    tmp = path.parent / f".tmp-{path.name}-{os.getpid()}"
    delay = float(os.environ.get("MPTCPLAB_SWEEP_WRITE_DELAY", "0") or 0)  # tests: widen the write window
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        if delay > 0:
            half = len(data) // 2
            os.write(fd, data[:half])
            time.sleep(delay)
            data = data[half:]
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _plain(value: Any) -> Any:
    """numpy scalars -> Python; NaN/inf -> None (JSON)."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def plain_columns(columns: dict[str, Any]) -> dict[str, list[Any]]:
    return {str(k): [_plain(x) for x in v] for k, v in columns.items()}


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.points_dir = self.root / "points"

    def open(self, name: str, version: str, allow_version_mix: bool, keys: list[str] | None = None) -> None:
        """Create or reopen the store; refuse points of another version unless allowed."""
        try:
            self.points_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ScenarioError("--out", f"cannot create '{self.points_dir}': {err.strerror or err}") from None
        for tmp in self.points_dir.glob(".tmp-*"):
            tmp.unlink(missing_ok=True)  # a write cut short by a kill: its point is redone
        manifest_path = self.root / "sweep.json"
        manifest: dict[str, Any] = {"name": name, "versions": []}
        if manifest_path.exists():
            try:
                manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                pass
        versions = set(manifest.get("versions") or []) | {v for _, _, v in self.keys()}
        others = sorted(versions - {version})
        if others and not allow_version_mix:
            raise VersionMixError(
                "--out",
                f"'{self.root}' holds results of mptcplab {', '.join(others)}, this is {version}; "
                "use another --out, or --allow-version-mix to reuse those points and add new ones",
            )
        manifest["name"] = name
        if keys is not None:
            manifest["keys"] = keys  # columns that identify a row (compare matches on them)
        manifest["versions"] = sorted(versions | {version})
        atomic_write(manifest_path, (json.dumps(manifest, indent=2) + "\n").encode())

    def keys(self) -> list[tuple[str, int, str]]:
        out = []
        if self.points_dir.is_dir():
            for p in self.points_dir.iterdir():
                m = _POINT.match(p.name)
                if m:
                    out.append((m["hash"], int(m["seed"]), m["version"]))
        return out

    def path(self, key: str) -> Path:
        return self.points_dir / f"{key}.json"

    def find(self, scenario_hash: str, seed: int, version: str, allow_version_mix: bool) -> Path | None:
        """The stored file of a point: this version's, else (if mixing) any version's."""
        prefix = f"{scenario_hash[:20]}-seed{seed}-v"
        mine = self.points_dir / f"{prefix}{version}.json"
        if mine.exists():
            return mine
        if allow_version_mix:
            for p in sorted(self.points_dir.glob(f"{prefix}*.json")):
                return p
        return None

    def write(self, key: str, record: dict[str, Any]) -> Path:
        path = self.path(key)
        atomic_write(path, (json.dumps(record, allow_nan=False, sort_keys=True) + "\n").encode())
        return path

    @staticmethod
    def read(path: Path) -> dict[str, Any]:
        return json.loads(Path(path).read_text(encoding="utf-8"))
