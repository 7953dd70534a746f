#!/usr/bin/env python3
"""Prints the values test_analysis_fixtures.cpp expects, computed straight from the
fixture with the json module (run from the repository root)."""
import json,gzip
d=json.load(gzip.open('tests/fixtures/torch/item_loop_l8_h200.json.gz'))
X=[e for e in d['traceEvents'] if e.get('ph')=='X']
ns=lambda us: round(float(us)*1000)
acts=sorted((ns(e['ts']),ns(e['ts'])+ns(e['dur'])) for e in X if e.get('cat') in ('kernel','gpu_memcpy','gpu_memset'))
syncs=[e for e in X if e.get('cat')=='cuda_runtime' and e['name'] in ('cudaStreamSynchronize','cudaDeviceSynchronize')]
def bubble(t):
    if any(s<t<e for s,e in acts): return 0
    prev=[e for s,e in acts if e<=t]; nxt=[s for s,e in acts if s>=t]
    if not prev or not nxt: return 0
    return max(0,min(nxt)-max(prev))
steps=[e for e in X if e.get('cat')=='user_annotation' and e['name'].startswith('train_step#')]
tot_b=tot_bl=0
for s in syncs:
    st=ns(s['ts']); en=st+ns(s['dur']); tot_bl+=en-st; tot_b+=bubble(en)
print('total blocked',tot_bl,'bubble',tot_b)
for w in steps:
    a=ns(w['ts']); b=a+ns(w['dur'])
    ins=[s for s in syncs if a<=ns(s['ts'])<b]
    bl=sum(ns(s['dur']) for s in ins); bu=sum(bubble(ns(s['ts'])+ns(s['dur'])) for s in ins)
    print(w['name'],'dur',b-a,'blocked',bl,'bubble',bu)
# busy union
u=0;cs=ce=None
for s,e in acts:
    if ce is None or s>ce:
        if ce is not None: u+=ce-cs
        cs,ce=s,e
    else: ce=max(ce,e)
u+=ce-cs
print('busy',u,'kernels',sum(1 for e in X if e.get('cat')=='kernel'),'d2h copy ns',sum(ns(e['dur']) for e in X if e.get('cat')=='gpu_memcpy'))
