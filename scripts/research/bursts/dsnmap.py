"""Which path carried which data-sequence range, in sending order (issue 12): the client's
data packets of a kernel run's `--pcap` directory, their DSN from the DSS mapping, runs of
consecutive packets on one path merged. usage: dsnmap.py DIR FROM_S TO_S"""
import sys
sys.path.insert(0,'/work/main/scripts/research/rcvprune')
import pcapmp
from pathlib import Path
d=Path(sys.argv[1]); a,b=float(sys.argv[2]),float(sys.argv[3])
ev=[]
t0=None
for f in sorted(d.glob('*.pcap')):
    recs=pcapmp.read(f)
    isn=None
    for r in recs:
        if not r['src'].startswith('10.100.'): continue
        if r['flags'] & 2: isn=r['seq']; continue
        if r['len']>0 and 'dsn' in r and isn is not None:
            rel=(r['seq']-isn)&0xffffffff
            dsn=r['dsn']+(rel-r['ssn'])
            ev.append((r['t'],f.stem,dsn,r['len']))
ev.sort()
t0=ev[0][0]; d0=min(e[2] for e in ev)
# collapse consecutive same-path sends into runs
runs=[]
for t,p,dsn,l in ev:
    x=t-t0
    if not (a<=x<b): continue
    if runs and runs[-1][1]==p and dsn==runs[-1][3] and x-runs[-1][4]<0.05:
        runs[-1][3]=dsn+l; runs[-1][4]=x; runs[-1][5]+=1
    else:
        runs.append([x,p,dsn,dsn+l,x,1])
for r in runs: print(f"{r[0]:7.3f}-{r[4]:7.3f} {r[1]} dsn {r[2]-d0:9d}..{r[3]-d0:9d} ({(r[3]-r[2])//1000} KB, {r[5]} pkts)")
