import random, sys
random.seed(3)
n, k = int(sys.argv[1]), int(sys.argv[2])
data = sorted(random.randrange(1 << 40) for _ in range(n))
keys = [random.randrange(1 << 40) for _ in range(k)]
open(sys.argv[3], "w").write("\n".join(map(str, data)) + "\n")
open(sys.argv[4], "w").write("\n".join(map(str, keys)) + "\n")
