//! Party-to-party transport for doram: in-process, TCP and mutually authenticated TLS 1.3
