//! AES-based hashing, PRGs, PRFs and cuckoo hashing for doram
