#!/bin/bash
# doram bench gkk12 at 2^20 over TLS (the CLI's default), alternating d15e78a and e99dade.
for r in "$@"; do
  for b in old new; do
    bin=/tmp/doram-$b
    $bin --json -q bench gkk12 --log-n 20 --accesses 10 --searches 3 > /tmp/b20/tls-$b-$r.json
    python3 -c "
import json;d=json.load(open('/tmp/b20/tls-$b-$r.json'))['sizes'][0]
print('$b run $r: read median %.3f s (min %.3f), search median %.2f s (min %.2f), load with helper %.1f s'%(d['access']['median_ms']/1e3,d['access']['min_ms']/1e3,d['search']['median_ms']/1e3,d['search']['min_ms']/1e3,d['load_ms']/1e3))"
  done
done
