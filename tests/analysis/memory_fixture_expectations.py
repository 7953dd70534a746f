#!/usr/bin/env python3
"""Prints the memory figures test_memory_fixture.cpp expects, computed straight from the fixture
with the json module and none of our code (run from the repository root): per device the event
counts, the peaks of "Total Allocated"/"Total Reserved" and when first reached, the allocations
live at the allocated peak (joined to frees by address) and their owners (the outermost aten::
cpu_op enclosing the allocation on its thread, else the innermost cpu_op, start <= t <= end)."""
import collections
import gzip
import json
import sys

path = sys.argv[1] if len(sys.argv) > 1 else 'tests/fixtures/memory/hta_df_index_resolver_rank1.json.gz'
d = json.load(gzip.open(path))
ev = d['traceEvents']
ns = lambda us: us * 1000 if isinstance(us, int) else round(float(us) * 1000)  # exact on int us
ops = collections.defaultdict(list)
for e in ev:
    if e.get('ph') == 'X' and e.get('cat') == 'cpu_op':
        ops[(e['pid'], e['tid'])].append((ns(e['ts']), ns(e['ts']) + ns(e['dur']), e['name']))
mem = [e for e in ev if e.get('ph') == 'i' and e.get('name') == '[memory]']
mem.sort(key=lambda e: ns(e['ts']))  # stable: file order at equal times
by_dev = collections.defaultdict(list)
for e in mem:
    by_dev[(e['args']['Device Type'], e['args']['Device Id'])].append(e)


def owner(e):
    t = ns(e['ts'])
    enc = sorted((s, -en, n) for s, en, n in ops[(e['pid'], e['tid'])] if s <= t <= en)  # outermost first
    for s, en, n in enc:
        if n.startswith('aten::'):
            return n
    return enc[-1][2] if enc else '(no op)'


print('memory events', len(mem))
for key in sorted(by_dev):
    es = by_dev[key]
    alloc = [e['args']['Total Allocated'] for e in es]
    res = [e['args']['Total Reserved'] for e in es]
    pa = max(alloc)
    ipa = alloc.index(pa)
    pr = max(res)
    ipr = res.index(pr)
    live = {}
    for e in es[:ipa + 1]:
        b, a = e['args']['Bytes'], e['args']['Addr']
        if b > 0:
            live[a] = e
        elif b < 0:
            live.pop(a, None)
    owners = collections.defaultdict(lambda: [0, 0])
    for a, e in live.items():
        o = owners[owner(e)]
        o[0] += 1
        o[1] += e['args']['Bytes']
    print(f'device {key}: events {len(es)} allocations {sum(e["args"]["Bytes"] > 0 for e in es)} '
          f'frees {sum(e["args"]["Bytes"] < 0 for e in es)}')
    print(f'  peak allocated {pa} at {ns(es[ipa]["ts"])}; peak reserved {pr} at {ns(es[ipr]["ts"])}')
    print(f'  live at peak {sum(e["args"]["Bytes"] for e in live.values())} in {len(live)} allocations, '
          f'{len(owners)} owners')
    for n, (c, b) in sorted(owners.items(), key=lambda x: (-x[1][1], x[0]))[:5]:
        print(f'    {n}: {c} x {b}')
