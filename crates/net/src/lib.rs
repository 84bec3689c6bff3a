//! Party-to-party transport for doram: in-process, TCP and mutually authenticated TLS 1.3.
//!
//! # Overview
//! A [`Session`] is one party's endpoint of a session of 2–4 parties. Protocol code uses a
//! blocking, message-oriented API — [`send`](Session::send) / [`recv`](Session::recv) for
//! postcard-encoded messages, [`send_bytes`](Session::send_bytes) /
//! [`recv_bytes`](Session::recv_bytes) for raw bytes and [`send_elems`](Session::send_elems) /
//! [`recv_elems`](Session::recv_elems) for vectors of field or ring elements — and the same code
//! runs over every backend:
//!
//! * **in-process** ([`Session::local_mesh`], [`LocalMesh`]): channels between threads of one
//!   process, with an optional [`Tamper`] hook for fault-injection tests;
//! * **TLS** ([`Session::connect`]): TLS 1.3 over TCP with mutual certificate authentication and
//!   certificates bound to party ids (see [`Config`] and [`certs`]); rustls (ring provider) runs
//!   the handshake and every record after it (alerts, `close_notify`, `KeyUpdate`, record
//!   limits);
//! * **plaintext TCP** ([`Session::connect_insecure_plaintext`]): the same without TLS, for
//!   trusted hosts only.
//!
//! Sends never wait for the receiver: a frame goes straight to the socket as far as it takes
//! it, and the rest is left to the link's writer thread; every incoming connection is drained
//! by a reader thread into a per-peer queue bounded in bytes. So parties may send several
//! messages before receiving and may send large messages to each other simultaneously, while a
//! peer cannot make a party buffer more than a few of its largest frames (see
//! [`Session`]'s memory section).
//!
//! Every session counts messages, payload bytes, framing bytes and rounds per peer and per
//! phase ([`Stats`]), keeps a Lamport clock carried in every frame header
//! ([`Session::rounds`]), can record a [`Transcript`] of the communication's shape, and can
//! emulate network latency and bandwidth ([`Shaping`]).
//!
//! Faults caused by peers — a closed connection, a malformed or oversized frame, silence past
//! the timeout, an untrusted certificate — are reported as a [`NetError`] naming the peer; none
//! panics or hangs.
//!
//! ```
//! use doram_core::PartyId;
//! use doram_net::Session;
//!
//! let mut parties = Session::local_mesh(2);
//! let mut p1 = parties.pop().unwrap();
//! let mut p0 = parties.pop().unwrap();
//! let t = std::thread::spawn(move || {
//!     let x: u64 = p1.recv(PartyId::P0)?;
//!     p1.send(PartyId::P0, &(x + 1))
//! });
//! p0.send(PartyId::P1, &41u64)?;
//! assert_eq!(p0.recv::<u64>(PartyId::P1)?, 42);
//! t.join().unwrap()?;
//! assert_eq!(p0.rounds(), 2);
//! # Ok::<(), doram_net::NetError>(())
//! ```
//!
//! # Wire format
//! Every message is one frame: a 12-byte header followed by the payload. The header holds the
//! payload length (`u32`), the sender's Lamport timestamp (40 bits), the frame's sequence
//! number on its link (one byte, counted from 0 per direction, mod 256) and the sender's
//! [`Phase`] (`u16`), all little-endian; see [`FRAME_HEADER_BYTES`].
//!
//! # One sequence and phase check for every protocol
//! [`Session::recv_bytes`] — and with it every receive method — refuses a frame that is not the
//! next one its sender sent on the link ([`NetError::OutOfSequence`]: a frame was lost,
//! repeated or reordered) or that was sent in another phase than the one the receiver is in
//! ([`NetError::WrongPhase`], see [`Session::set_wire_phase`]). Both errors name the sender and
//! fail the link, so no protocol can take a frame for the next message of the same size.
//! This is doram's only lost-frame scheme: protocols add no sequence numbers or tags of their
//! own to their payloads and check only the exact length and the contents of each message
//! (`doram_core::wire`). The check costs no message, no round and no byte: sequence number and
//! phase fit in the header beside a 40-bit clock, and a frame with sequence number 0 in phase 0
//! has the bytes of the earlier header (a `u32` length and a `u64` clock).

pub mod certs;
mod config;
mod connect;
mod error;
mod frame;
mod inbox;
mod loopback;
mod mesh;
pub mod service;
mod session;
mod shaping;
mod stats;
mod stream;
#[cfg(feature = "testkit")]
pub mod testkit;
mod tls;
mod writer;

pub use config::{
    Config, MAX_FRAME_LIMIT, PartyConfig, TlsConfig, default_party_name, parse_certs,
};
pub use connect::{ConnectOptions, Transport};
pub use error::{ConfigError, NetError};
pub use frame::{FRAME_HEADER_BYTES, Phase};
pub use loopback::loopback_mesh;
pub use mesh::{
    DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMEOUT, LocalMesh, Tamper, TamperFn, run_parties,
    run_parties_ok,
};
pub use session::{Session, TransportKind};
pub use shaping::Shaping;
/// Entry points for the fuzz harnesses (`doram-fuzz`): the frame decoders that read peer bytes.
#[doc(hidden)]
pub mod fuzzing {
    /// Feeds `bytes` to the incremental frame decoder in pieces of the given sizes (cycled),
    /// then ends the stream; returns the number of frames decoded.
    pub fn stream_decoder(bytes: &[u8], pieces: &[usize], limit: u32) -> usize {
        let mut d = crate::frame::StreamDecoder::new(limit);
        let (mut pos, mut frames, mut i) = (0, 0, 0);
        while pos < bytes.len() {
            let step = match pieces {
                [] => bytes.len(),
                p => p[i % p.len()],
            };
            let end = bytes.len().min(pos + step.max(1));
            frames += d
                .feed(&bytes[pos..end])
                .into_iter()
                .filter(Result::is_ok)
                .count();
            pos = end;
            i += 1;
        }
        let _ = d.finish();
        frames
    }

    /// Reads frames from `bytes` as from a socket until the end or an error; returns the
    /// number of frames read.
    pub fn read_frames(bytes: &[u8], limit: u32) -> usize {
        let mut r = bytes;
        let mut frames = 0;
        while let Ok(Some(_)) = crate::frame::read_frame(&mut r, limit) {
            frames += 1;
        }
        frames
    }
}

pub use stats::{Comm, DEFAULT_PHASE, LinkStats, PhaseStats, Stats, Transcript, TranscriptEvent};
