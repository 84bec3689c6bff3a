"""Random complete preference lists for `doram run stable-matching --prefs FILE`.

Usage: python3 gen_prefs.py K > prefsK.json  (Python's `random` seeded with 1000 + K, so the
runs of matching-run-k{33,100}-run*.json can be repeated on the same lists).
"""
import json
import random
import sys

k = int(sys.argv[1])
rng = random.Random(1000 + k)


def one_list():
    v = list(range(k))
    rng.shuffle(v)
    return v


prefs = {"proposers": [one_list() for _ in range(k)], "acceptors": [one_list() for _ in range(k)]}
json.dump(prefs, sys.stdout)
