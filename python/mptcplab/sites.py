"""Multi-homed sites of seed 000 Table 1 (NorNet Core), as data.

    >>> from mptcplab.sites import load_sites, subflow_labels
    >>> load_sites()["UNIS"].isps[1].up_kbit_s
    10000
    >>> subflow_labels(Scenario.from_toml("scenarios/sites/unis-hin.toml"))["telenor~broadnet"]
    'T-B'

The table lives in ``mptcplab/data/sites/nornet.toml`` (rates only, as printed in Table 1).
Scenario files that use it: ``scenarios/sites/*.toml``, one ``[[hosts]]`` entry per site
whose name is the site key and whose ISP names are the Table 1 names, lower-cased.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import ScenarioError

__all__ = ["Isp", "Site", "load_sites", "subflow_labels"]


@dataclass(frozen=True)
class Isp:
    name: str
    abbrev: str
    down_kbit_s: int
    up_kbit_s: int
    access: str


@dataclass(frozen=True)
class Site:
    key: str
    name: str
    location: str
    isps: tuple[Isp, ...]

    def isp(self, name: str) -> Isp:
        for isp in self.isps:
            if isp.name.lower() == name.lower():
                return isp
        raise KeyError(name)


def load_sites(path: str | Path | None = None) -> dict[str, Site]:
    """Sites by key (``SRL``, ``HU``, ``UNIS``, ``HiN``, ``UiT``, ``HAW``)."""
    if path is None:
        text = resources.files("mptcplab").joinpath("data/sites/nornet.toml").read_text(encoding="utf-8")
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as err:
            raise ScenarioError("<file>", f"cannot read {path}: {err.strerror or err}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError("<toml>", f"{path or 'sites.toml'}: {err}") from None
    out: dict[str, Site] = {}
    for i, s in enumerate(data.get("sites") or []):
        try:
            isps = tuple(Isp(str(x["name"]), str(x["abbrev"]), int(x["down_kbit_s"]), int(x["up_kbit_s"]),
                             str(x.get("access", ""))) for x in s["isps"])
            out[str(s["key"])] = Site(str(s["key"]), str(s["name"]), str(s["location"]), isps)
        except (KeyError, TypeError, ValueError) as err:
            raise ScenarioError(f"sites[{i}]", f"malformed site entry ({err})") from None
    return out


def subflow_labels(scenario: Any, sites: dict[str, Site] | None = None) -> dict[str, str]:
    """Path name -> the seed's subflow label ("<local abbrev>-<remote abbrev>", Table 2)
    for a scenario whose two ``[[hosts]]`` are Table 1 sites (matched by name, case
    ignored). Paths it cannot map keep their own name."""
    data = scenario.to_dict() if hasattr(scenario, "to_dict") else dict(scenario)
    hosts = data.get("hosts") or []
    if len(hosts) != 2:
        return {}
    sites = sites or load_sites()
    by_key = {k.lower(): s for k, s in sites.items()}
    local, remote = (by_key.get(str(h.get("name", "")).lower()) for h in hosts)
    labels: dict[str, str] = {}
    for a in hosts[0].get("isps") or []:
        for b in hosts[1].get("isps") or []:
            path = f"{a['name']}~{b['name']}"
            try:
                labels[path] = f"{local.isp(a['name']).abbrev}-{remote.isp(b['name']).abbrev}"  # type: ignore[union-attr]
            except (KeyError, AttributeError):
                labels[path] = path
    return labels
