"""The identity corpus (`./dev identity save|check`): it finds a changed output, names it,
and passes on an unchanged tree."""
from __future__ import annotations

import shutil

from conftest import REPO
from mptcplab import identity


def _root(tmp_path):
    root = tmp_path / "repo"
    (root / "scenarios").mkdir(parents=True)
    shutil.copy(REPO / "scenarios" / "two-paths-wifi-lte.toml", root / "scenarios" / "a.toml")
    (root / "scenarios" / "sweeps").mkdir()
    (root / "scenarios" / "sweeps" / "plan.toml").write_text("not a scenario")  # sweep plans are skipped
    return root


def test_an_unchanged_tree_gives_identical_outputs_and_a_changed_output_is_named(tmp_path, capsys):
    root = _root(tmp_path)
    saved = tmp_path / "corpus"
    digests, failed = identity.run_corpus(saved, root)
    assert not failed and len(digests) >= 2 * 5  # two seeds, every table, meta and the trace
    assert any(k.endswith(".trace.txt") for k in digests)
    assert identity.check(saved, root) == 0
    assert "0 differ, 0 missing, 0 new" in capsys.readouterr().out
    # One value of one table changed by a float's last digit: found and named.
    victim = saved / "scenarios__a.seed2.summary.txt"
    lines = victim.read_text().splitlines()
    cells = lines[1].split("\t")
    i = next(k for k, c in enumerate(cells) if "." in c)
    cells[i] = repr(float(cells[i]) * (1 + 1e-15) if float(cells[i]) else 1e-300)
    victim.write_text("\n".join([lines[0], "\t".join(cells), *lines[2:]]) + "\n")
    assert identity.check(saved, root) == 1
    out = capsys.readouterr().out
    assert "differs: scenarios__a.seed2.summary.txt: line 2:" in out and "1 differ" in out


def test_the_validate_scenarios_also_run_as_validate_runs_them_upstream(tmp_path):
    root = _root(tmp_path)
    (root / "scenarios" / "validate").mkdir()
    shutil.copy(REPO / "scenarios" / "validate" / "buffer-blocking.toml", root / "scenarios" / "validate" / "b.toml")
    rel = [(str(p.relative_to(root)), prof) for p, prof in identity.runs(root)]
    assert rel == [("scenarios/a.toml", None), ("scenarios/validate/b.toml", None),
                   ("scenarios/validate/b.toml", "upstream")]
    names = dict(identity.outputs(root / "scenarios" / "validate" / "b.toml", 1, trace=False, profile="upstream"))
    assert '"profile": "upstream"' in names["meta"] and "receive_memory" in names["meta"]
