#!/usr/bin/env python3
"""CPU per event of two dropin test binaries, alternated (docs/performance.md, "Issue 37's cost bounds").

    go test -c -o /tmp/old.test ./dropin      # in a worktree of the old commit
    go test -c -o /tmp/new.test ./dropin      # in this one
    python3 hack/cpuab.py /tmp/old.test,/tmp/new.test 8 'SharedInformer/handlers=1/dropin$' [dir]

Each round runs each binary's benchmark at -benchtime 14x and 2x and takes the difference of the two
runs' CPU time (getrusage of the child process, user + system), so that what a run pays once (the
fixture, the warm-up pass) cancels out, and divides it by 12 passes of 110,000 events. The binaries'
order alternates from round to round. It prints each round, then the medians and new / old.
dir is where the binaries run (default: the dropin folder beside this script).
"""
import os
import resource
import statistics
import subprocess
import sys

bins = sys.argv[1].split(',')
rounds = int(sys.argv[2])
bench = sys.argv[3]
cwd = sys.argv[4] if len(sys.argv) > 4 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'dropin')
lo, hi = 2, 14
events = 110000  # internal/informerbench.Events


def cpu(binpath, n):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binpath, '-test.run', '^$', '-test.bench', bench, '-test.benchtime', f'{n}x'], cwd=cwd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


res = {b: [] for b in bins}
for r in range(rounds):
    for b in (bins if r % 2 == 0 else bins[::-1]):
        res[b].append((cpu(b, hi) - cpu(b, lo)) / ((hi - lo) * events) * 1e9)
    print(r, {os.path.basename(b): round(res[b][-1]) for b in bins}, 'load', open('/proc/loadavg').read().split()[0], flush=True)
for b in bins:
    print(os.path.basename(b), 'median CPU ns/event', round(statistics.median(res[b])), sorted(round(x) for x in res[b]))
m = [statistics.median(res[b]) for b in bins]
print('ratio', os.path.basename(bins[1]), '/', os.path.basename(bins[0]), round(m[1] / m[0], 3))
