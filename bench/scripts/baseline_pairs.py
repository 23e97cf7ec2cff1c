#!/usr/bin/env python3
"""baseline_pairs.py FILE... - the Markdown table of BENCHMARKS.md's "Baseline check" from
baseline_check.sh output: per workload point, each back-to-back pair (C program / parlite-bench
--engine sqlite), the ratio of each pair oriented so that >1 means the C program did better
(tps: C/RS; times: RS/C), their geometric mean, and the load1 / cpu_other range of the runs."""
import re,sys,statistics as st, math
from collections import defaultdict
def kv(l): return dict(re.findall(r'(\w+)=("[^"]*"|\S+)', l))
pairs=defaultdict(lambda: defaultdict(dict))  # key -> (file,rep) -> who -> value
meta=defaultdict(list)
for f in sys.argv[1:]:
    rep=None
    for l in open(f):
        l=l.rstrip('\n')
        m=re.search(r'rep=(\d+)', l)
        if l.startswith('#') and m: rep=m.group(1); continue
        if not (l.startswith('C ') or l.startswith('RS ')): continue
        who=l.split()[0]; d=kv(l); w=d.get('workload')
        if w=='bdb_update': key=(w, 'WAL sync='+d['sync'], d['threads'], 'tps')
        elif w=='mt_insert': key=(w, d['journal']+' '+d['mode'], '8', 'wall_ms')
        elif w=='kv_ops': key=(w, d['journal']+' '+d['sync'], '1', 'total_s')
        elif w=='hc_mixed': key=(w, ('-P ' if d['schema']=='cols' else '')+d['nupdate']+':'+d['nscan'], d['threads'], 'tps')
        else: continue
        pairs[key][(f,rep)][who]=float(d[key[3]])
        meta[key].append((float(d['load1']), int(d['cpu_other'].rstrip('%'))))
print('| workload | config | threads | metric | C / parlite-bench (SQLite) per back-to-back pair | pair ratios C/RS (>1: the C program did better) | geo-mean ratio | load1 | cpu_other |')
print('|---|---|---|---|---|---|---|---|---|')
for key,ps in pairs.items():
    good=[(p['C'],p['RS']) for p in ps.values() if 'C' in p and 'RS' in p]
    if not good: continue
    better_c = (lambda c,r: c/r) if key[3]=='tps' else (lambda c,r: r/c)
    rs=[better_c(c,r) for c,r in good]
    gm=math.exp(sum(map(math.log,rs))/len(rs))
    f=lambda v: f'{v:,.0f}' if v>=100 else f'{v:.2f}'
    l1=[m[0] for m in meta[key]]; co=[m[1] for m in meta[key]]
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {'; '.join(f(c)+' / '+f(r) for c,r in good)} | {' '.join(f'{x:.2f}' for x in rs)} | **{gm:.2f}** | {min(l1):.1f}–{max(l1):.1f} | {min(co)}–{max(co)}% |")
