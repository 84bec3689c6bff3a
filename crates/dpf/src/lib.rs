//! Distributed point functions (BGI, Half-Tree, cuckoo multi-point) for doram
