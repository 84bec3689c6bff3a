import random, sys
random.seed(7)
V, E = int(sys.argv[1]), int(sys.argv[2])
seen = set()
out = []
while len(out) < E:
    u = random.randrange(V); v = random.randrange(V)
    if u == v or (u, v) in seen: continue
    seen.add((u, v)); out.append(f"{u} {v} {random.randrange(1, 1000)}")
open(sys.argv[3], "w").write("\n".join(out) + "\n")
