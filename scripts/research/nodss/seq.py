import sys
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from chunks import load, chunks
d=sys.argv[1]; maps,pk=load(d); ch=chunks(maps); t0=min(c[3] for c in ch)
for c in ch[30:60]:
    print(f"{c[3]-t0:8.3f} {c[2]} dsn+{c[0]-ch[0][0]:>9} len {c[1]:>6} fragpos {(c[0]-ch[0][0])%32728}")
