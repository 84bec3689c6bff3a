# Checks every report's output against plain Python (heapq Dijkstra, deque BFS, bisect).
import bisect, collections, glob, heapq, json, random, subprocess, sys, tempfile, os

def graph(v, e):
    d = tempfile.mkdtemp()
    subprocess.run([sys.executable, "../2026-11-27-programs/gen-graph.py", str(v), str(e), f"{d}/g.txt"], check=True)
    return [tuple(map(int, l.split())) for l in open(f"{d}/g.txt")]

def dijkstra(v, edges, s):
    adj = collections.defaultdict(list)
    for a, b, w in edges:
        adj[a].append((b, w))
    dist = [None] * v
    pq = [(0, s)]
    while pq:
        d, u = heapq.heappop(pq)
        if dist[u] is not None:
            continue
        dist[u] = d
        for b, w in adj[u]:
            if dist[b] is None:
                heapq.heappush(pq, (d + w, b))
    return dist

def bfs(v, edges, s):
    return dijkstra(v, [(a, b, 1) for a, b, _ in edges], s)

ok = True
for v, e in [(101, 1000), (300, 3000), (1000, 10000)]:
    g = graph(v, e)
    want = {"dijkstra": dijkstra(v, g, 0), "bfs": bfs(v, g, 0)}
    for prog in want:
        for f in sorted(glob.glob(f"{prog}-v{v}-run*.json")):
            got = json.load(open(f))["output"]["distances"]
            good = got == want[prog]
            ok &= good
            print(f, "ok" if good else "WRONG")
random.seed(3)
data = sorted(random.randrange(1 << 40) for _ in range(131073))
keys = [random.randrange(1 << 40) for _ in range(1000)]
for f in sorted(glob.glob("binary-search-*.json")):
    res = json.load(open(f))["output"]["results"]
    good = all(r["index"] == bisect.bisect_left(data, k) and
               r["found"] == (r["index"] < len(data) and data[r["index"]] == k)
               for r, k in zip(res, keys)) and len(res) == len(keys)
    ok &= good
    print(f, "ok" if good else "WRONG")
sys.exit(0 if ok else 1)
