"""`mptcplab validate`: the sim-vs-kernel matrix (docs/kernel.md) and, with a scenario,
the scenario check. The matrix run itself is a kernel test (root); its statistics, the
simulator side and the CLI's argument rules run anywhere."""
from __future__ import annotations

import csv
import json
import math
import re

import pytest

from conftest import REPO, run_cli
from mptcplab import Scenario
from mptcplab.kernel import validate as val
from mptcplab.stats import t_quantile


def test_the_ratio_interval_is_the_delta_method_with_student_t():
    a, b = [10.0, 12.0, 14.0], [10.0, 10.0, 10.0]
    r, lo, hi = val.ratio_ci(a, b)
    # b has no spread: Var(r) = r² s_a² / (n ā²), df = n - 1 = 2
    half = t_quantile(0.975, 2) * 1.2 * math.sqrt(4.0 / 3 / 144)
    assert r == pytest.approx(1.2) and (lo, hi) == (pytest.approx(1.2 - half), pytest.approx(1.2 + half))
    assert val.ratio_ci([2.0, 2.0], [1.0, 1.0]) == (2.0, 2.0, 2.0)  # no spread: zero width
    # both sides spread: the relative variances add, Welch–Satterthwaite df
    ta, tb = 4.0 / 3 / 144, 1.0 / 3 / 100
    df = (ta + tb) ** 2 / (ta ** 2 / 2 + tb ** 2 / 2)
    _, lo2, hi2 = val.ratio_ci(a, [9.0, 10.0, 11.0])
    assert (hi2 - lo2) / 2 == pytest.approx(t_quantile(0.975, df) * 1.2 * math.sqrt(ta + tb))


def _run(goodput: float, p0: float, rtt: float) -> dict:
    return {"goodput_mbps": goodput, "shares": {"p0": p0, "p1": 1 - p0}, "rtt_ms": rtt}


def test_the_table_names_each_miss_and_ends_with_the_worst_ratio(tmp_path):
    rows = [
        val.Row("a", "reno", {"sim": [_run(10, 0.5, 20)] * 3, "kernel": [_run(9.5, 0.45, 21), _run(10.5, 0.5, 22),
                                                                         _run(10, 0.55, 23)]}),
        val.Row("b", "cubic", {"sim": [_run(8, 0.9, 30), _run(8, 0.9, 31), _run(8, 0.9, 29)],
                               "kernel": [_run(10, 0.5, 40)] * 3}),
        val.Row("c", "bbr", {"sim": [_run(12, 0.5, 30)] * 3, "kernel": [_run(10, 0.5, 30)] * 3}),
    ]
    meta = {"version": "x", "kernel": "6.18", "quick": False, "reps": 3, "duration_s": 30.0,
            "profile": "upstream profile: not available"}
    rep = val.ValidateReport(rows, meta, [dict(g) for g in val.KNOWN_GAPS], "test")
    lines = rep.text().splitlines()
    row = {x.split()[0]: x for x in lines if x[:2] in ("a ", "b ", "c ")}
    assert row["a"].endswith(" ok") and "1.00 [" in row["a"] and "p0 +0.0 ± " in row["a"]
    assert "10.00 (n = 1)" in row["a"] and "9.50 ± " not in row["a"]  # identical sim runs: n = 1, not ± 0
    assert row["b"].endswith("MISS (ratio, shares)") and "p0 +40.0" in row["b"] and "p1 -40.0" in row["b"]
    assert row["c"].endswith("MISS (ratio)") and "1.20 [1.20, 1.20]" in row["c"]
    # 0.80 is farther from 1 than 1.20 on a log scale (|ln 0.8| = 0.22 > |ln 1.2| = 0.18)
    assert lines[-2] == "1 of 3 ratios within 0.85–1.15; shares within ±10 points in 2 of 3"
    assert lines[-1] == "worst ratio: 0.80 [0.80, 0.80] (b, cubic)"
    assert "  - spurious_recovery_undo: kernel: " in rep.text()
    rep.save(tmp_path)
    again = val.ValidateReport.load(tmp_path)
    assert again.text() == rep.text()
    from mptcplab.reproduce.model import Reproduction

    repro = Reproduction.load(tmp_path)
    assert [c.verdict for c in repro.claims] == [True, True, False, False, False, True]


def test_the_matrix_covers_the_issues_cases_with_committed_scenario_files():
    names = [n for n, _ in val.MATRIX]
    assert {"rate-limited-20ms", "rate-limited-100ms", "random-loss", "asymmetric-rtt", "buffer-blocking",
            "shared-bottleneck"} == set(names)
    for name, ccs in val.MATRIX:
        path = val.SCENARIO_DIR / f"{name}.toml"
        text = path.read_text()
        assert text.startswith("# mptcplab validate:") and "Assumptions" in text, path
        scn = Scenario.from_toml(path).validate().to_dict()
        c = scn["connections"][0]
        assert c["initial_path"] and not c["opportunistic_retransmission"] and not c["penalisation"]
        assert set(ccs) <= {"reno", "cubic", "bbr"} and len(ccs) >= 2
    assert {n for n, _ in val.QUICK_MATRIX} < set(names)


def test_without_the_upstream_profile_the_sim_side_is_unchanged_and_says_so(monkeypatch):
    scn = Scenario.from_toml(val.SCENARIO_DIR / "random-loss.toml")
    monkeypatch.setattr(val, "upstream_profile_available", lambda: False)  # a core without the profile
    out, line = val.sim_side(scn)
    assert out.to_dict() == scn.to_dict()
    assert line.startswith("upstream profile: not available")


def test_with_the_upstream_profile_the_sim_side_applies_it():
    assert val.upstream_profile_available()
    out, line = val.sim_side(Scenario.from_toml(val.SCENARIO_DIR / "buffer-blocking.toml"))
    assert out.to_dict()["run"]["profile"] == "upstream"
    assert line.startswith("upstream profile: applied")


def test_the_sim_side_adds_the_emulators_measured_delay_error_as_jitter_per_path_direction():
    # docs/kernel.md, "Accuracy of the emulator": mean one-way error 0.048-0.069 ms a path.
    two_hops, _ = val.sim_side(Scenario.from_toml(val.SCENARIO_DIR / "seed001-topology1.toml"))
    assert {ln["jitter"] for ln in two_hops.to_dict()["links"]} == {"60 us"}, "split over a path's two links"
    one_hop, line = val.sim_side(Scenario.from_toml(val.SCENARIO_DIR / "random-loss.toml"))
    assert {ln["jitter"] for ln in one_hop.to_dict()["links"]} == {"120 us"}
    assert "jitter" in line
    oot, line = val.sim_side(Scenario.from_toml(val.SCENARIO_DIR / "random-loss.toml"), "out_of_tree")
    assert {ln["jitter"] for ln in oot.to_dict()["links"]} == {"120 us"} and "jitter" in line
    # A link that sets its own jitter keeps it.
    own = Scenario.from_toml(val.SCENARIO_DIR / "random-loss.toml").with_("links[0].jitter", "1 ms")
    assert val.sim_side(own)[0].to_dict()["links"][0]["jitter"] == "1 ms"


def test_the_profile_switch_is_read_from_the_schema(monkeypatch):
    import mptcplab

    schema = json.loads(mptcplab.schema())
    schema["definitions"]["RunSpec"].setdefault("properties", {})["profile"] = {"anyOf": [
        {"$ref": "#/definitions/ProfileName"}, {"type": "null"}]}
    schema["definitions"]["ProfileName"] = {"oneOf": [{"type": "string", "enum": ["out_of_tree"]},
                                                      {"type": "string", "enum": ["upstream"]}]}
    monkeypatch.setattr(mptcplab, "schema", lambda: json.dumps(schema))
    assert val._profile_values() == ["out_of_tree", "upstream"] and val.upstream_profile_available()


def test_known_gaps_fall_back_to_the_modules_list_with_spurious_recovery_undo():
    gaps, source = val.known_gaps()
    assert any(g["name"] == "spurious_recovery_undo" for g in gaps)
    assert all({"name", "kernel", "sim"} <= set(g) for g in gaps) and source


@pytest.mark.parametrize("args, field", [
    (["scenarios/validate/random-loss.toml", "--quick"], "--quick"),
    (["scenarios/validate/random-loss.toml", "--out", "x"], "--out"),
    (["--print"], "--print"),
])
def test_matrix_options_with_a_scenario_and_print_without_one_are_one_line_errors(args, field):
    proc = run_cli("validate", *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {field}: ") and len(proc.stderr.strip().splitlines()) == 1


def test_validate_with_a_scenario_still_checks_the_file():
    proc = run_cli("validate", "scenarios/validate/shared-bottleneck.toml")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: scenarios/validate/shared-bottleneck.toml: 4 links, 3 paths")
    assert "sim-vs-kernel matrix" in run_cli("validate", "--help").stdout


@pytest.mark.kernel
def test_validate_quick_prints_the_table_and_writes_json_csv_and_a_report(tmp_path):
    """The shape of `mptcplab validate --quick` (CI, ~30 s), not its figures."""
    out = tmp_path / "v"
    proc = run_cli("validate", "--quick", "--out", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith("mptcplab validate --quick: simulator") and "2 runs per backend" in lines[0]
    assert lines[1].startswith("upstream profile: ")
    header = next(i for i, x in enumerate(lines) if x.startswith("scenario "))
    for name, ccs in val.QUICK_MATRIX:
        row = next(x for x in lines if x.startswith(name))
        assert ccs[0] in row and row.count("±") >= 5 and "[" in row, row
    assert any(x.startswith("known gaps (") for x in lines[header:])
    # Two kernel runs give wide delta-method intervals whose lower end can fall below 0.
    assert re.match(r"worst ratio: \d+\.\d\d \[-?\d+\.\d\d, \d+\.\d\d\] \(", lines[-1]), lines[-1]
    assert re.match(r"[0-2] of 2 ratios within 0\.85–1\.15; shares within ±10 points in [0-2] of 2$", lines[-2])
    data = json.loads((out / "validate.json").read_text())
    assert data["meta"]["quick"] and data["meta"]["reps"] == 2 and len(data["table"]) == 2
    for row, run in zip(data["table"], data["runs"]):
        assert set(row) >= {"ratio", "ratio_lo", "ratio_hi", "share_diff_points", "rtt_sim_ms", "rtt_kernel_ms"}
        assert len(run["sim"]) == len(run["kernel"]) == 2
        assert all(k["integrity"] and set(k["integrity"].values()) <= {"ok", "ok (prefix: aborted close)"}
                   for k in run["kernel"])
    assert data["worst"]["ratio"] == max((r["ratio"] for r in data["table"]), key=lambda x: abs(math.log(x)))
    with open(out / "validate.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:3] == ["scenario", "cc", "goodput_sim_mbps"] and len(rows) == 1 + 4  # 2 paths each
    proc = run_cli("report", str(out))
    assert proc.returncode == 0, proc.stderr
    html = (out / "report.html").read_text()
    assert "sim/kernel goodput ratio within 0.85–1.15" in html and "share within ±10 points" in html
    assert (REPO / "scenarios" / "validate").is_dir()


# -- issue 12: the bounded-buffer and lossy-start families, kernel runs kept as data ----------
def test_the_bounded_buffer_family_covers_both_topologies_both_first_paths_and_four_buffers():
    pts = val.FAMILIES["bounded-buffer"]
    assert len(pts) == 2 * 2 * 4
    seen = set()
    for p in pts:
        over = dict(p.overrides)
        assert p.ccs == ("reno", "cubic") and p.duration_s == 60.0 and p.reps >= 3
        seen.add((p.scenario, over["connections[0].initial_path"], over["connections[0].receive_buffer"],
                  over.get("connections[0].send_buffer")))
    assert len(seen) == 16
    # fast and slow first: topology 1's slow path is path4 (1 Mbit/s), topology 2's path1 (1 Mbit/s)
    assert {(s, i) for s, i, _, _ in seen} == {("seed001-topology1", "path1"), ("seed001-topology1", "path4"),
                                              ("seed001-topology2", "path2"), ("seed001-topology2", "path1")}
    assert {r for _, _, r, _ in seen} == {"100 KB", "200 KB", "1 MB"}
    assert {snd for *_, snd in seen} == {None, "200 KB"}
    for p in pts:
        scn = Scenario.from_toml(val.SCENARIO_DIR / f"{p.scenario}.toml")
        for fld, v in p.overrides:
            scn = scn.with_(fld, v)
        c = scn.validate().to_dict()["connections"][0]
        assert len(c["paths"]) == 4 and not c["opportunistic_retransmission"] and not c["penalisation"]


def test_only_loss_free_points_run_the_simulator_more_often_than_the_kernel():
    """The bounded-buffer points and the core buffer-blocking and shared-bottleneck rows have no random loss, so
    the simulator runs 100 seeds there; points with loss draw the same losses per seed
    on both backends (common random numbers), so their runs must pair one to one."""
    assert all(p.sim_reps == val.BOUNDED_BUFFER_SIM_REPS == 100 for p in val.FAMILIES["bounded-buffer"])
    more = [p for fam in val.FAMILIES.values() for p in fam if p.sim_reps is not None]
    for p in more:
        scn = Scenario.from_toml(val.SCENARIO_DIR / f"{p.scenario}.toml").validate().to_dict()
        assert not any(link.get("loss") for link in scn["links"]), p.label
        assert p.sim_reps > (p.reps or val.FULL_REPS), p.label
    assert all(p.sim_reps is None for p in val.FAMILIES["lossy-start"])
    # buffer-blocking joined at stop 40: revision 6's three kernel runs left its cubic mean
    # loose (one run at 8.18 Mbit/s against 4.91 and 5.18), so it got the ten-run rule.
    assert [(p.label, p.reps, p.sim_reps) for p in val.FAMILIES["core"] if p.sim_reps is not None] == [
        ("buffer-blocking", 10, 100), ("shared-bottleneck", 10, 100)]
    # random-loss has ten kernel runs too, but draws its losses per seed: runs pair one to one.
    assert [(p.label, p.reps) for p in val.FAMILIES["core"] if p.reps == 10 and p.sim_reps is None] == [
        ("random-loss", 10)]


def test_band_power_says_how_often_a_perfect_model_misses_the_band_and_how_many_runs_fix_that():
    # No spread, or too few simulator runs to stand for a distribution: nothing to say.
    assert val.band_power([3.0] * 30, 10) is None
    assert val.band_power([1.0, 5.0] * 5, 10) is None
    # A tight distribution: three kernel runs already hit the band every time.
    tight = [5.0 + 0.01 * (i % 7) for i in range(100)]
    assert val.band_power(tight, 3) == {"sim_runs": 100, "kernel_runs": 3, "p_miss": 0.0, "runs_for_5pct": 3}
    # Two modes, as where the receive deadlock splits the runs (1 and 5 Mbit/s, half each):
    # the mean of ten runs is 1 + 0.4 k with k ~ Binomial(10, 1/2), inside the band around 3
    # (2.61-3.53) only for k = 5 or 6, so a perfect model misses with probability
    # 1 - (252 + 210) / 1024 = 0.549; to bring that to 5 % the mean's sd, 2 / sqrt(n), must be
    # under 0.39 / 1.96: about a hundred runs.
    mix = [1.0, 5.0] * 50
    b = val.band_power(mix, 10)
    assert abs(b["p_miss"] - 0.549) < 0.03 and b == val.band_power(mix, 10)  # the same draws every time
    assert b["runs_for_5pct"] in (100, 150)
    assert val.band_power(mix, b["runs_for_5pct"])["p_miss"] <= 0.05 < val.band_power(mix, 20)["p_miss"]


def test_a_point_with_sim_reps_runs_the_simulator_that_often_and_says_so(tmp_path, monkeypatch):
    import mptcplab
    from mptcplab.kernel import backend

    monkeypatch.setattr(backend, "check_environment", lambda: pytest.fail("stored-only must not need root"))
    p = val.Point("test", "rate-limited-20ms", "rate-limited-20ms", ("cubic",), duration_s=2.0, reps=2, sim_reps=4)
    monkeypatch.setitem(val.FAMILIES, "test", (p,))
    scn = Scenario.from_toml(val.SCENARIO_DIR / "rate-limited-20ms.toml").with_duration(2.0).with_("connections[0].cc", "cubic")
    store = val.KernelStore(tmp_path / "kd")
    sim_scn, _ = val.sim_side(scn)
    for seed in (1, 2):
        store.put(p, "cubic", seed, scn, val.run_figures(mptcplab.simulate(sim_scn, seed=seed)), {})
    told: list[tuple[int, int]] = []
    rep = val.run_validate(families=["test"], kernel_data=tmp_path / "kd", stored_only=True, log=lambda m: None,
                           progress=lambda done, total: told.append((done, total)))
    (row,) = rep.rows
    assert [r["seed"] for r in row.runs["sim"]] == [1, 2, 3, 4] and [r["seed"] for r in row.runs["kernel"]] == [1, 2]
    assert told == [(k, 6) for k in range(1, 7)], "the CLI's bar hears of every run of both backends"
    assert rep.meta["reps"] is None and rep.meta["points"][0]["sim_reps"] == 4
    assert "runs: the simulator 4 a point" in rep.text() and "the kernel 2" in rep.text()
    # With random loss the seeds pair the two backends' loss draws: more simulator runs are refused.
    lossy = val.Point("test", "random-loss", "random-loss", ("cubic",), duration_s=2.0, reps=2, sim_reps=4)
    monkeypatch.setitem(val.FAMILIES, "test", (lossy,))
    with pytest.raises(Exception) as err:
        val.run_validate(families=["test"], kernel_data=tmp_path / "kd", stored_only=True, log=lambda m: None)
    assert err.value.field == "<matrix>" and "random loss" in str(err.value)


def test_the_lossy_start_family_runs_three_ccs_five_times_with_goodput_per_5_s():
    pts = val.FAMILIES["lossy-start"]
    assert [(p.scenario, p.duration_s) for p in pts] == [
        ("lossy-start-exp1", 10.0), ("lossy-two-path", 30.0), ("lossy-two-path", 30.0)]
    assert all(p.ccs == ("reno", "cubic", "bbr") and p.reps >= 5 and p.bin_s == 5.0 for p in pts)
    assert [dict(p.overrides).get("links[0].loss") for p in pts] == [None, 0.0001, 0.001]
    for name in ("seed001-topology1", "seed001-topology2", "lossy-start-exp1", "lossy-two-path"):
        text = (val.SCENARIO_DIR / f"{name}.toml").read_text()
        assert text.startswith("# mptcplab validate:") and "Assumptions" in text, name


def test_select_points_filters_by_label_and_cc_and_names_a_bad_family():
    pts = val.select_points(["bounded-buffer"], only="topology2/slow/rcv1MB/cubic")
    assert [(p.label, p.ccs) for p in pts] == [("topology2/slow/rcv1MB", ("cubic",))]
    with pytest.raises(Exception) as err:
        val.select_points(["no-such"])
    assert err.value.field == "--family"
    with pytest.raises(Exception) as err:
        val.select_points(["core"], only="nothing-matches")
    assert err.value.field == "--only"


def test_modes_split_runs_only_at_a_large_gap():
    assert val.modes([1.04, 8.30, 2.77]) == [(pytest.approx(1.905), 2), (8.30, 1)]
    assert val.modes([9.5, 10.0, 10.5]) == [(10.0, 3)]
    assert val.modes([]) == []


def test_fishers_exact_test_gives_the_textbook_p_values():
    # Fisher's lady tasting tea (3 of 4 against 1 of 4): two-sided p = 34/70 = 0.4857
    # (Agresti 2002, section 3.5.1, table 3.8).
    assert val.fisher_exact_p(3, 4, 1, 4) == pytest.approx(34 / 70)
    assert val.fisher_exact_p(5, 10, 5, 10) == pytest.approx(1.0)
    # 0 of 10 against 10 of 10: the two most extreme tables, 2 / C(20, 10)
    assert val.fisher_exact_p(0, 10, 10, 10) == pytest.approx(2 / 184756)
    # symmetric in the backends
    assert val.fisher_exact_p(4, 10, 9, 10) == pytest.approx(val.fisher_exact_p(9, 10, 4, 10))
    assert 0.05 < val.fisher_exact_p(4, 10, 9, 10) < 0.06


def test_the_exact_mann_whitney_test_gives_the_tabled_p_values():
    # m = n = 4 fully separated: 2 / C(8, 4) = 0.0286 (Mann & Whitney 1947, table I)
    assert val.mann_whitney_p([1, 2, 3, 4], [5, 6, 7, 8]) == pytest.approx(2 / 70)
    # m = n = 3, U = 3: P(U <= 3) = 7/20 (null counts 1,1,2,3,3,3,3,2,1,1), two-sided 0.7
    assert val.mann_whitney_p([1, 3, 5], [2, 4, 6]) == pytest.approx(0.7)
    assert val.mann_whitney_p([2.0], [1.0, 3.0]) == pytest.approx(1.0)
    assert val.mann_whitney_p([], [1.0]) is None


def test_the_receive_deadlock_is_counted_per_run_and_per_mode_on_both_backends():
    def sim(g, stalled):
        return {"goodput_mbps": g, "shares": {"p": 1.0}, "rtt_ms": 50.0, "receive_stalled_at_s": stalled}

    def ker(g, drops):
        return {"goodput_mbps": g, "shares": {"p": 1.0}, "rtt_ms": 50.0,
                "netstat": {"client": {}, "server": {"TcpExt.TCPRcvQDrop": drops} if drops else {}}}

    assert val.deadlocked(sim(1.0, 12.5)) is True and val.deadlocked(sim(6.0, None)) is False
    assert val.deadlocked(ker(1.1, 35)) is True and val.deadlocked(ker(6.2, 0)) is False
    assert val.deadlocked({"goodput_mbps": 1.0}) is None, "a run that does not tell"
    row = val.Row("t1", "reno", {"sim": [sim(1.0, 11.0)] * 3, "kernel": [ker(1.08, 35), ker(6.44, 0), ker(5.98, 0)]})
    d = row.figures()["deadlock"]
    assert d["sim"] == {"runs": 3, "deadlocked": 3, "deadlocked_mbps": 1.0, "clean_mbps": None}
    assert d["kernel"]["deadlocked"] == 1 and d["kernel"]["deadlocked_mbps"] == 1.08
    assert d["kernel"]["clean_mbps"] == pytest.approx(6.21)
    assert d["frequency_p"] == pytest.approx(0.4), "3 of 3 against 1 of 3: the two extreme tables, (3 + 3) / C(6, 4)"
    assert d["onset_p"] == pytest.approx(0.5), "1.08 above all three 1.0: U = 0, 2 x 1/4 orderings"
    clean = val.Row("t2", "reno", {"sim": [sim(3.0, None)] * 3, "kernel": [ker(3.1, 0)] * 3})
    assert clean.figures()["deadlock"] is None, "no deadlock on either side: no entry"


def test_nodss_drops_are_read_from_both_backends_and_compared_per_row():
    def sim(n):
        return {"goodput_mbps": 5.0, "shares": {"p": 1.0}, "rtt_ms": 50.0, "receive_stalled_at_s": None,
                "nodss_window": n}

    def ker(n):
        return {"goodput_mbps": 5.0, "shares": {"p": 1.0}, "rtt_ms": 50.0,
                "netstat": {"client": {}, "server": {"MPTcpExt.NoDSSInWindow": n} if n else {}}}

    assert val.nodss_drops(sim(7)) == 7 and val.nodss_drops(ker(0)) == 0 and val.nodss_drops(ker(93)) == 93
    assert val.nodss_drops({"goodput_mbps": 1.0}) is None
    row = val.Row("t2", "reno", {"sim": [sim(150), sim(0), sim(90)], "kernel": [ker(173), ker(256), ker(93)]})
    d = row.figures()["nodss_window"]
    assert d["sim"] == {"runs": 3, "mean": 80.0, "runs_with_drops": 2}
    assert d["kernel"]["mean"] == pytest.approx(174.0) and d["kernel"]["runs_with_drops"] == 3
    text = val.ValidateReport([row], {"kernel": "6.18", "version": "t", "reps": 3, "duration_s": 60, "quick": False, "profile": "p"}, [], "test").text()
    assert "NoDSSInWindow" in text and "t2" in text.split("NoDSSInWindow")[1]
    none = val.Row("t1", "reno", {"sim": [sim(0)] * 3, "kernel": [ker(0)] * 3})
    assert none.figures()["nodss_window"] is None


def test_tail_loss_probes_and_rtos_are_read_from_both_backends_and_compared_per_row():
    """The simulator's own counts (meta["loss_probes"] with tcp.tail_loss_probe, the
    subflows' RTOs) against the client's TcpExt TCPLossProbes / TCPLossProbeRecovery /
    TCPTimeouts; a real upstream run of a deadlocking point carries them."""
    import mptcplab

    def ker(probes, rtos):
        return {"goodput_mbps": 5.0, "shares": {"p": 1.0}, "rtt_ms": 50.0,
                "netstat": {"client": {"TcpExt.TCPLossProbes": probes, "TcpExt.TCPTimeouts": rtos}, "server": {}}}

    assert val.tail_counters(ker(3, 7)) == {"TCPLossProbes": 3, "TCPLossProbeRecovery": 0, "TCPTimeouts": 7}
    assert val.tail_counters({"goodput_mbps": 1.0}) is None
    p = next(x for x in val.FAMILIES["bounded-buffer"] if x.label == "topology1/fast/rcv200KB")
    scn = Scenario.from_toml(val.SCENARIO_DIR / f"{p.scenario}.toml")
    for f, v in p.overrides:
        scn = scn.with_(f, v)
    sim, _ = val.sim_side(scn.with_("connections[0].cc", "reno").with_duration(60))
    runs = [val.run_figures(mptcplab.simulate(sim, seed=s)) for s in (1, 2)]
    assert all(set(r["tail"]) == set(val.TAIL_COUNTERS) for r in runs)
    assert sum(r["tail"]["TCPLossProbes"] for r in runs) > 0 and sum(r["tail"]["TCPTimeouts"] for r in runs) > 0
    row = val.Row("t1", "reno", {"sim": runs, "kernel": [ker(2, 13), ker(3, 15)]})
    t = row.figures()["tail"]
    assert t["kernel"] == {"runs": 2, "TCPLossProbes": 2.5, "TCPLossProbeRecovery": 0.0, "TCPTimeouts": 14.0}
    text = val.ValidateReport([row], {"kernel": "6.18", "version": "t", "reps": 2, "duration_s": 60, "quick": False, "profile": "p"}, [], "test").text()
    assert "TCPLossProbes" in text and "t1" in text.split("tail loss probes")[1]
    # Out of tree: no probes, no table.
    oot, _ = val.sim_side(scn.with_("connections[0].cc", "reno").with_duration(10), "out_of_tree")
    assert "tail" not in val.run_figures(mptcplab.simulate(oot, seed=1))


def test_hystart_exits_are_read_from_both_backends_and_compared_for_cubic_rows():
    import mptcplab

    # The simulator counts HyStart's exits as the kernel's TcpExt counters do.
    scn = Scenario.from_toml(val.SCENARIO_DIR / "buffer-blocking.toml").with_duration(5)
    scn = scn.with_("connections[0].cc", "cubic").with_("run.profile", "upstream")
    fig = val.run_figures(mptcplab.simulate(scn, seed=1))
    ex = val.hystart_exits(fig)
    assert ex["TCPHystartTrainDetect"] + ex["TCPHystartDelayDetect"] >= 1, "the fast subflow leaves slow start by HyStart"
    assert ex["TCPHystartDelayCwnd"] + ex["TCPHystartTrainCwnd"] > 0
    reno = val.run_figures(mptcplab.simulate(scn.with_("connections[0].cc", "reno"), seed=1))
    assert "hystart" not in reno and val.hystart_exits(reno) is None, "no CUBIC, no count"

    def ker(train, tcwnd, delay, dcwnd):
        c = {"TcpExt.TCPHystartTrainDetect": train, "TcpExt.TCPHystartTrainCwnd": tcwnd,
             "TcpExt.TCPHystartDelayDetect": delay, "TcpExt.TCPHystartDelayCwnd": dcwnd}
        return {"goodput_mbps": 5.0, "shares": {"p": 1.0}, "rtt_ms": 50.0,
                "netstat": {"client": {k: v for k, v in c.items() if v}, "server": {}}}

    def sim(train, tcwnd, delay, dcwnd):
        return {"goodput_mbps": 5.0, "shares": {"p": 1.0}, "rtt_ms": 50.0,
                "hystart": {"TCPHystartTrainDetect": train, "TCPHystartTrainCwnd": tcwnd,
                            "TCPHystartDelayDetect": delay, "TCPHystartDelayCwnd": dcwnd}}

    assert val.hystart_exits(ker(0, 0, 3, 139)) == {"TCPHystartTrainDetect": 0, "TCPHystartTrainCwnd": 0,
                                                   "TCPHystartDelayDetect": 3, "TCPHystartDelayCwnd": 139}
    row = val.Row("exp1", "cubic", {"sim": [sim(1, 256, 0, 0)] * 2, "kernel": [ker(1, 907, 1, 168), ker(2, 1660, 0, 0)]})
    h = row.figures()["hystart"]
    assert h["sim"] == {"runs": 2, "train": 1.0, "delay": 0.0, "cwnd_at_exit": 256.0}
    assert h["kernel"]["train"] == 1.5 and h["kernel"]["delay"] == 0.5
    assert h["kernel"]["cwnd_at_exit"] == pytest.approx((907 + 168 + 1660) / 4)
    text = val.ValidateReport([row], {"kernel": "6.18", "version": "t", "reps": 2, "duration_s": 10, "quick": False, "profile": "p"}, [], "test").text()
    assert "HyStart" in text and "exp1" in text.split("HyStart")[1]
    assert val.Row("exp1", "reno", row.runs).figures()["hystart"] is None, "CUBIC rows only"


def test_the_sim_side_runs_the_kernel_backends_polling_writer_and_that_splits_the_locked_buffers_share():
    """validate runs the kernel backend's writer on the simulator too (poll, then write one
    64 KiB chunk). Seed 001 topology 1, slow path first, 200 KB receive and locked 200 KB
    send buffer: the kernel splits the last two fast subflows (path2 15.6 %, path3 12.2 %
    over three runs); with that writer so does the simulator, with a blocking writer not
    (docs/research/upstream-traces-2026-11-27.md, section 2)."""
    import mptcplab

    p = next(x for x in val.FAMILIES["bounded-buffer"] if x.label == "topology1/slow/rcv200KB-snd200KB")
    scn = Scenario.from_toml(val.SCENARIO_DIR / f"{p.scenario}.toml")
    for f, v in p.overrides:
        scn = scn.with_(f, v)
    sim, header = val.sim_side(scn.with_("connections[0].cc", "reno").with_duration(30))
    assert sim.to_dict()["connections"][0]["app"]["poll_chunk"] == "65536 B"
    assert "poll before each 64 KiB write" in header

    def shares(s):
        ss = mptcplab.simulate(s, seed=1).subflow_summary
        return dict(zip(ss["path"], 100 * ss["bytes_acked"] / ss["bytes_acked"].sum()))

    polled = shares(sim)
    blocking = shares(sim.with_("connections[0].app", {"kind": "bulk"}))
    assert 8 < polled["path3"] < 20 and 8 < polled["path2"] < 20, polled
    assert blocking["path3"] < 3 and blocking["path2"] > 20, blocking


def test_goodput_bins_add_up_to_the_runs_goodput():
    import mptcplab

    scn = Scenario.from_toml(val.SCENARIO_DIR / "lossy-two-path.toml").with_duration(10)
    res = mptcplab.simulate(scn, seed=2)
    fig = val.run_figures(res, bin_s=5.0, duration_s=10.0)
    assert len(fig["bins"]) == 2 and fig["bin_s"] == 5.0
    assert fig["bins"][0] < fig["bins"][1]  # slow start lies in the first bin
    assert sum(fig["bins"]) / 2 == pytest.approx(fig["goodput_mbps"], rel=0.02)


def _store_point() -> val.Point:
    return val.Point("core", "rate-limited-20ms", "rate-limited-20ms", ("cubic",))


def test_the_kernel_store_keeps_a_run_whole_and_ignores_one_of_another_scenario(tmp_path):
    store = val.KernelStore(tmp_path)
    p = _store_point()
    fig = {"goodput_mbps": 9.0, "shares": {"p0": 1.0}, "rtt_ms": 21.0}
    a = Scenario.from_dict({"name": "a", "run": {"duration": "2 s"}})
    path = store.put(p, "cubic", 1, a, fig, {"kernel": "6.18"})
    assert path == tmp_path / "core" / "rate-limited-20ms" / "cubic" / "seed-1.json"
    assert store.get(p, "cubic", 1, a) == fig
    assert store.get(p, "cubic", 1, a.with_duration("3 s")) is None  # the scenario changed: stale
    assert store.get(p, "cubic", 2, a) is None
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_stored_run_tells_the_emulator_revision_it_was_measured_with_and_the_report_names_older_ones(tmp_path):
    from mptcplab.kernel.emulator import EMULATOR_REVISION

    store = val.KernelStore(tmp_path)
    p = _store_point()
    a = Scenario.from_dict({"name": "a", "run": {"duration": "2 s"}})
    fig = {"goodput_mbps": 9.0, "shares": {"p0": 1.0}, "rtt_ms": 21.0}
    for seed, meta, rev in ((1, {}, 1), (2, {"emulator_steering": "rps-per-flow"}, 2),
                            (3, {"emulator_steering": "rps-per-flow", "loss_draws": "simulator-streams"}, 3),
                            (4, {"emulator_revision": EMULATOR_REVISION, "kernel": "6.0.1-a"}, EMULATOR_REVISION)):
        store.put(p, "cubic", seed, a, fig, meta)
        assert store.load(p, "cubic", seed, a) == (fig, rev, meta.get("kernel"))
    line = val._revision_line({"kernel_emulator_revisions": {"1": 5, "4": 2}, "emulator_revision": 4})
    assert "the current one is 4" in line and "revision 1: 5, revision 4: 2" in line
    assert val._revision_line({"kernel_emulator_revisions": {"4": 7}, "emulator_revision": 4}) == ""


def test_stored_only_compares_the_simulator_with_stored_kernel_runs_without_root(tmp_path, monkeypatch):
    """With the simulator's own runs stored as the "kernel" side, every ratio is 1 and
    every share difference 0, and nothing calls the kernel backend."""
    import mptcplab
    from mptcplab.kernel import backend

    monkeypatch.setattr(backend, "check_environment", lambda: pytest.fail("stored-only must not need root"))
    monkeypatch.setattr(backend, "run_kernel", lambda *a, **k: pytest.fail("stored-only must not run the kernel"))
    p = _store_point()
    base = Scenario.from_toml(val.SCENARIO_DIR / "rate-limited-20ms.toml").with_duration(2.0)
    scn = base.with_("connections[0].cc", "cubic")
    store = val.KernelStore(tmp_path / "kd")
    sim_scn, _ = val.sim_side(scn)
    for seed, release in ((1, "6.0.1-a"), (2, "6.0.1-b")):
        store.put(p, "cubic", seed, scn, val.run_figures(mptcplab.simulate(sim_scn, seed=seed)), {"kernel": release})
    rep = val.run_validate(matrix=[("rate-limited-20ms", ("cubic",))], reps=2, duration=2.0,
                           kernel_data=tmp_path / "kd", stored_only=True, log=lambda m: None)
    (f,) = rep.table()
    assert f["ratio"] == 1.0 and all(d == 0.0 for d, _ in f["share_diff_points"].values())
    # The header names the kernels the stored runs were measured on, not this machine's.
    assert rep.meta["kernel_releases"] == {"6.0.1-a": 1, "6.0.1-b": 1}
    assert "vs Linux 6.0.1-a (1 run), 6.0.1-b (1 run) MPTCP" in rep.text().splitlines()[0]
    same = val.KernelStore(tmp_path / "kd1")
    for seed in (1, 2):
        same.put(p, "cubic", seed, scn, val.run_figures(mptcplab.simulate(sim_scn, seed=seed)), {"kernel": "6.0.1-a"})
    one = val.run_validate(matrix=[("rate-limited-20ms", ("cubic",))], reps=2, duration=2.0,
                           kernel_data=tmp_path / "kd1", stored_only=True, log=lambda m: None)
    assert one.meta["kernel"] == "6.0.1-a" and "vs Linux 6.0.1-a MPTCP" in one.text()
    with pytest.raises(Exception) as err:  # a run that is not stored is an error, not a gap
        val.run_validate(matrix=[("rate-limited-20ms", ("cubic",))], reps=3, duration=2.0,
                         kernel_data=tmp_path / "kd", stored_only=True, log=lambda m: None)
    assert err.value.field == "--kernel-data" and "seed 3" in str(err.value)


def test_the_out_of_tree_profile_can_be_validated_too():
    scn = Scenario.from_toml(val.SCENARIO_DIR / "seed001-topology1.toml")
    sim, line = val.sim_side(scn, "out_of_tree")
    assert sim.to_dict()["run"]["profile"] == "out_of_tree" and line.startswith("out_of_tree profile: applied")
    with pytest.raises(Exception) as err:
        val.sim_side(scn, "bsd")
    assert err.value.field == "--profile"


def test_the_matrix_flags_belong_to_the_matrix_form():
    proc = run_cli("validate", "scenarios/validate/shared-bottleneck.toml", "--family", "bounded-buffer")
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error: --family:")
    proc = run_cli("validate", "--stored-only")
    assert proc.returncode == 2 and "--stored-only" in proc.stderr


KERNEL_DATA = REPO / "docs" / "validate" / "kernel"


@pytest.mark.parametrize("family", ["bounded-buffer", "lossy-start"])
def test_the_committed_kernel_runs_cover_the_family_and_match_its_scenarios(family):
    """Every point, CC and seed of the family has a stored kernel run of the scenario as
    it is now (a changed scenario file or override makes its runs stale and fails here),
    with the integrity check passed and the hosts' counters kept."""
    store = val.KernelStore(KERNEL_DATA)
    for p in val.FAMILIES[family]:
        base = Scenario.from_toml(val.SCENARIO_DIR / f"{p.scenario}.toml")
        for fld, v in p.overrides:
            base = base.with_(fld, v)
        for cc in p.ccs:
            scn = base.with_duration(p.duration_s).with_("connections[0].cc", cc)
            for seed in range(1, p.reps + 1):
                fig = store.get(p, cc, seed, scn)
                assert fig is not None, f"{family}/{p.label}/{cc} seed {seed}: no stored run of this scenario"
                assert set(fig["integrity"].values()) <= {"ok", "ok (prefix: aborted close)"}
                assert fig["goodput_mbps"] > 0 and abs(sum(fig["shares"].values()) - 1) < 1e-6
                assert "netstat" in fig and (p.bin_s is None or len(fig["bins"]) == int(p.duration_s / p.bin_s))


def test_rack_repairs_the_1mb_rows_burst_losses_without_an_rto_as_the_kernel_does():
    """Seed 001's 1 MB rows (8 points x reno/cubic x the 3 stored seeds): the kernel took no
    TCPTimeouts in any of its 24 runs; the upstream profile's RACK loss detection
    (tcp.loss_detection = "rack", tcp_recovery.c) takes none either, where RFC 6675's
    DupThresh rule leaves a burst's lost tail to the RTO (13 of 24 runs when measured,
    2026-11-27)."""
    import mptcplab

    store = val.KernelStore(KERNEL_DATA)
    runs = {"rack": 0, "dupthresh": 0}
    kernel_timeouts = 0
    for p in val.FAMILIES["bounded-buffer"]:
        if not p.label.endswith("/rcv1MB"):
            continue
        base = Scenario.from_toml(val.SCENARIO_DIR / f"{p.scenario}.toml")
        for fld, v in p.overrides:
            base = base.with_(fld, v)
        for cc in p.ccs:
            scn = base.with_duration(p.duration_s).with_("connections[0].cc", cc)
            sim, _ = val.sim_side(scn)
            assert sim.to_dict()["tcp"].get("loss_detection", "rack") == "rack"
            for seed in range(1, 4):
                kernel_timeouts += store.get(p, cc, seed, scn)["netstat"]["client"].get("TcpExt.TCPTimeouts", 0)
                for ld in runs:
                    ss = mptcplab.simulate(sim.with_("tcp.loss_detection", ld), seed=seed).subflow_summary
                    runs[ld] += int(ss["rto_count"].sum() > 0)
    assert kernel_timeouts == 0
    assert runs["rack"] == 0, runs
    assert runs["dupthresh"] >= 6, runs
