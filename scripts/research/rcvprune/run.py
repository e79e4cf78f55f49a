"""One instrumented kernel run of a bounded-buffer point (topology1/fast/rcv200KB unless
LABEL names another, of the family FAMILY). usage: run.py SEED DURATION_S OUTDIR [cc]
TRACE=trace2.bt in the environment records the linger-time inputs instead of the
receive side (trace.bt, the default); RCVBUF overrides the receive buffer.
Writes OUTDIR/{bt.txt, ss.txt, pcap/, result/, info.json}."""
import json, os, signal, subprocess, sys, threading, time
from pathlib import Path
from mptcplab import Scenario
from mptcplab.kernel import validate as val
from mptcplab.kernel.backend import run_kernel

seed, dur, out = int(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3])
cc = sys.argv[4] if len(sys.argv) > 4 else "reno"
out.mkdir(parents=True, exist_ok=True)
p = [x for x in val.FAMILIES[os.environ.get("FAMILY", "bounded-buffer")] if x.label == os.environ.get("LABEL", "topology1/fast/rcv200KB")][0]
scn = Scenario.from_toml(val.SCENARIO_DIR / f"{p.scenario}.toml")
for f, v in p.overrides:
    scn = scn.with_(f, v)
scn = scn.with_("connections[0].cc", cc)
if os.environ.get("RCVBUF"):
    scn = scn.with_("connections[0].receive_buffer", os.environ["RCVBUF"])
    print("receive_buffer", os.environ["RCVBUF"])

clk = {"mono0": time.clock_gettime(time.CLOCK_MONOTONIC), "real0": time.time()}
env = dict(os.environ, BPFTRACE_PERF_RB_PAGES="2048")
bt_err = open(out / "bt.err", "w")
bt = subprocess.Popen(["bpftrace", "-B", "full", "-o", str(out / "bt.txt"), str(Path(__file__).with_name(os.environ.get("TRACE", "trace.bt")))],
                      stdout=bt_err, stderr=bt_err, env=env)
t_end = time.time() + 60
while time.time() < t_end:
    if (out / "bt.txt").exists() and "Attaching" in (out / "bt.txt").read_text(errors="replace")[:200]:
        break
    if bt.poll() is not None:
        sys.exit("bpftrace died: " + (out / "bt.err").read_text())
    time.sleep(0.2)
time.sleep(0.5)

before = set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()
stop = threading.Event()
info = {"seed": seed, "duration_s": dur, "cc": cc, **clk}

def watcher():
    ns = None
    while not stop.is_set():
        try:
            names = set(os.listdir("/run/netns"))
        except FileNotFoundError:
            names = set()
        new = [n for n in names - before if n.startswith("mpl") and n.endswith("s")]
        if new:
            ns = new[0]
            break
        time.sleep(0.005)
    if ns is None:
        return
    info["ss_ns"] = ns
    loop = (f"while [ -e /run/netns/{ns} ]; do echo \"@T $(date +%s.%N)\"; ss -tmiHn; echo '@M'; ss -MmiHn; "
            f"sleep 0.006; done")
    with open(out / "ss.txt", "w") as fh:
        subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", loop], stdout=fh, stderr=subprocess.DEVNULL)

th = threading.Thread(target=watcher, daemon=True)
th.start()
try:
    r = run_kernel(scn, seed=seed, duration=dur, drain_s=3, pcap=out / "pcap")
finally:
    stop.set()
    time.sleep(0.5)
    bt.send_signal(signal.SIGINT)
    try:
        bt.wait(timeout=30)
    except subprocess.TimeoutExpired:
        bt.kill()
info["clk_end_mono"] = time.clock_gettime(time.CLOCK_MONOTONIC)
info["clk_end_real"] = time.time()
info["prefix"] = r.meta.get("prefix")
info["netstat"] = r.meta.get("netstat")
info["goodput"] = r.summary[["flow", "goodput_mbps"]].to_dict("records")
r.save(out / "result")
(out / "info.json").write_text(json.dumps(info, indent=1, default=str))
print(r.summary[["flow", "goodput_mbps"]].to_string())
ss = r.subflow_summary
print(ss[["path", "bytes_sent", "bytes_acked", "bytes_retrans", "rto_count"]].to_string())
srv = (r.meta.get("netstat") or {})
for role, c in srv.items():
    print(role, {k: v for k, v in c.items() if any(w in k for w in ("Drop", "Prune", "Timeout", "OFO", "Window", "Rcv", "MPTcp", "Retrans", "Collapse"))})
