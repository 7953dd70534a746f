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

# Idle attribution (profiler/analysis/include/syncscope/analysis/idle.hpp), computed again here from
# the JSON: the device's busy union, its gaps, each gap classified by the activity that ends
# it and that activity's launch call (by correlation), clipped to each step.
gpu=sorted((ns(e['ts']),ns(e['ts'])+ns(e['dur']),e['args'].get('correlation',0)) for e in X if e.get('cat') in ('kernel','gpu_memcpy','gpu_memset'))
launch={}
for e in X:
    if e.get('cat') in ('cuda_runtime','cuda_driver') and 'correlation' in e.get('args',{}):
        c=e['args']['correlation']; launch[c]=min(launch.get(c,ns(e['ts'])),ns(e['ts']))
returns=sorted(ns(s['ts'])+ns(s['dur']) for s in syncs)
busy=[]
for s,e,c in gpu:
    if busy and s<=busy[-1][1]: busy[-1][1]=max(busy[-1][1],e)
    else: busy.append([s,e])
gaps=[]
for (a,b),(c,d) in zip(busy,busy[1:]):
    nxt=next(x for x in gpu if x[0]==c and x[1]>x[0])
    L=launch.get(nxt[2])
    hi=c if L is None else min(c,L)
    if any(b<=t<=hi for t in returns): k='sync_bubble'
    elif L is not None and L>b: k='host_wait'
    else: k='other'   # no stream waits in this trace
    gaps.append((b,c,k))
def clip(s,e,a,b): return max(0,min(e,b)-max(s,a))
for w in steps:
    a=max(ns(w['ts']),busy[0][0]); b=min(ns(w['ts'])+ns(w['dur']),busy[-1][1])
    out={'window':b-a,'busy':sum(clip(s,e,a,b) for s,e in busy)}
    for k in ('sync_bubble','host_wait','other'): out[k]=sum(clip(s,e,a,b) for s,e,kk in gaps if kk==k)
    print(w['name'],'idle',out)
