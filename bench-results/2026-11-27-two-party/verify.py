# Checks every two-party report's output against plain Python (heapq Dijkstra, BFS, bisect,
# a stability check of the matching). Run from this directory.
import bisect, collections, glob, heapq, json, random, subprocess, sys, tempfile

def graph(v, e):
    d = tempfile.mkdtemp()
    subprocess.run([sys.executable, "../2026-11-27-programs/gen-graph.py", str(v), str(e), f"{d}/g.txt"], check=True)
    return [tuple(map(int, l.split())) for l in open(f"{d}/g.txt")]

def dijkstra(v, edges, s):
    adj = collections.defaultdict(list)
    for a, b, w in edges:
        adj[a].append((b, w))
    dist, pq = [None] * v, [(0, s)]
    while pq:
        d, u = heapq.heappop(pq)
        if dist[u] is None:
            dist[u] = d
            for b, w in adj[u]:
                if dist[b] is None:
                    heapq.heappush(pq, (d + w, b))
    return dist

ok = True
def check(f, good):
    global ok
    ok &= good
    print(f, "ok" if good else "WRONG")

for v, e in [(101, 1000), (300, 3000), (1000, 10000)]:
    g = graph(v, e)
    want = {"dijkstra": dijkstra(v, g, 0), "bfs": dijkstra(v, [(a, b, 1) for a, b, _ in g], 0)}
    for prog in want:
        for f in sorted(glob.glob(f"{prog}-v{v}-run*.json")):
            check(f, json.load(open(f))["output"]["distances"] == want[prog])
random.seed(3)
data = sorted(random.randrange(1 << 40) for _ in range(16383))
key = random.randrange(1 << 40)
for f in sorted(glob.glob("binary-search-*.json")):
    r = json.load(open(f))["output"]
    i = bisect.bisect_left(data, key)
    check(f, r["index"] == i and r["found"] == (i < len(data) and data[i] == key))
prefs = json.loads(subprocess.run([sys.executable, "../2026-11-27-programs/gen_prefs.py", "33"],
                                  check=True, capture_output=True, text=True).stdout)
for f in sorted(glob.glob("matching-k33-run*.json")):
    m = json.load(open(f))["output"]
    pp, ap = m["proposer_partner"], m["acceptor_partner"]
    rank = [{p: r for r, p in enumerate(l)} for l in prefs["acceptors"]]
    # Stable: no proposer p and acceptor a who both prefer each other to their partners.
    stable = all(ap[pp[p]] == p for p in range(33)) and not any(
        prefs["proposers"][p].index(a) < prefs["proposers"][p].index(pp[p]) and rank[a][p] < rank[a][ap[a]]
        for p in range(33) for a in range(33))
    check(f, stable)
sys.exit(0 if ok else 1)
