#!/usr/bin/env python3
"""BenchmarkMetrics of two or more dropin/prometheus test binaries, alternated (docs/performance.md,
"Issue 37's cost bounds, measured": the metrics' cost).

    (cd /path/to/a/worktree/of/the/old/commit && go test -c -o /tmp/old.test ./dropin/prometheus)
    go test -c -o /tmp/new.test ./dropin/prometheus     # in this one
    nice python3 hack/metricsab.py /tmp/old.test,/tmp/new.test 10 4 [dir]

Each round runs each binary's BenchmarkMetrics once at -benchtime <passes>x (each pass alternates a
metrics-off and a metrics-on run of the 110,000-event workload, one and four handlers), in alternating
order from round to round, and prints what each reported with the load average; then, per binary and
handler count, the median of every metric over the rounds. on÷off-cpu is the number issue 37 bounds
(at most 1.05); floor is the least it can be (a binary built before the floor's change reports its
old definition as floor and has no cb-floor).
dir is where the binaries run (default: the dropin/prometheus folder beside this script).
"""
import os
import re
import statistics
import subprocess
import sys

bins = sys.argv[1].split(',')
rounds = int(sys.argv[2])
passes = int(sys.argv[3])
cwd = sys.argv[4] if len(sys.argv) > 4 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'dropin', 'prometheus')
line = re.compile(r'^BenchmarkMetrics/informer/(handlers=\d+)-\d+\s+\d+\s+\d+ ns/op\s+(.*)$')


def run(binpath):
    out = subprocess.run([binpath, '-test.run', '^$', '-test.bench', 'BenchmarkMetrics', '-test.benchtime', f'{passes}x'],
                         cwd=cwd, capture_output=True, text=True, check=True).stdout
    got = {}
    for l in out.splitlines():
        m = line.match(l)
        if m:
            fields = m.group(2).split()
            got[m.group(1)] = {fields[i + 1]: float(fields[i]) for i in range(0, len(fields) - 1, 2)}
    return got


res = {b: [] for b in bins}
for r in range(rounds):
    load = open('/proc/loadavg').read().split()[0]
    for b in (bins if r % 2 == 0 else bins[::-1]):
        got = run(b)
        res[b].append(got)
        for h, ms in sorted(got.items()):
            print(r, os.path.basename(b), h, ' '.join(f'{k}={v:g}' for k, v in sorted(ms.items())), flush=True)
    print(r, 'load', load, '->', open('/proc/loadavg').read().split()[0], flush=True)

print('medians over', rounds, 'rounds')
for b in bins:
    for h in sorted({h for got in res[b] for h in got}):
        keys = sorted({k for got in res[b] for k in got.get(h, {})})
        med = {k: statistics.median(got[h][k] for got in res[b] if k in got.get(h, {})) for k in keys}
        print(os.path.basename(b), h, ' '.join(f'{k}={v:.4g}' for k, v in med.items()))
