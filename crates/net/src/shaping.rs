//! Traffic shaping inside the transport (see [`Shaping`]).

use std::time::{Duration, Instant};

/// Per-link traffic shaping parameters (one-way latency and bandwidth), applied to every link of
/// a session.
///
/// Shaping is enforced by the receiving side of every link, so it needs no privileges, works on
/// loopback and needs no synchronised clocks. When a frame of `b` wire bytes (payload plus
/// header) arrives at time `t`, its delivery time is
///
/// ```text
/// start        = max(t, link_free_at)
/// link_free_at = start + 8·b / bandwidth
/// deliver_at   = link_free_at + latency
/// ```
///
/// and `recv` does not return the frame before `deliver_at`. Frames on one link are therefore
/// serialised at the configured bandwidth and each is delayed by the one-way latency; the two
/// directions of a pair of parties are shaped independently. Real transfer time on the host is
/// not subtracted, which on loopback is negligible.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shaping {
    /// Added one-way latency per frame.
    pub latency: Duration,
    /// Link capacity in bits per second; `None` for unlimited.
    pub bandwidth_bits_per_sec: Option<f64>,
}

impl Shaping {
    /// No shaping: frames are delivered as soon as they arrive.
    pub const NONE: Shaping = Shaping {
        latency: Duration::ZERO,
        bandwidth_bits_per_sec: None,
    };

    /// A local network: 0.5 ms one-way latency (1 ms round trip) and 10 Gbit/s.
    pub fn lan() -> Shaping {
        Shaping {
            latency: Duration::from_micros(500),
            bandwidth_bits_per_sec: Some(10e9),
        }
    }

    /// A wide-area network: 30 ms one-way latency and 100 Mbit/s.
    pub fn wan() -> Shaping {
        Shaping {
            latency: Duration::from_millis(30),
            bandwidth_bits_per_sec: Some(100e6),
        }
    }

    /// Whether this shaping changes anything.
    pub fn is_none(&self) -> bool {
        self.latency.is_zero() && self.bandwidth_bits_per_sec.is_none()
    }

    /// Time to push `bytes` through the bandwidth cap.
    pub fn transfer_time(&self, bytes: usize) -> Duration {
        match self.bandwidth_bits_per_sec {
            Some(bw) if bw > 0.0 => Duration::from_secs_f64(bytes as f64 * 8.0 / bw),
            _ => Duration::ZERO,
        }
    }
}

/// The shaping state of one link (on its receiving side).
#[derive(Debug)]
pub(crate) struct Shaper {
    shaping: Shaping,
    free_at: Option<Instant>,
}

impl Shaper {
    pub fn new(shaping: Shaping) -> Self {
        Shaper {
            shaping,
            free_at: None,
        }
    }

    /// The delivery time of a frame of `wire_bytes` that arrived at `arrival`, or `None` when
    /// the link is not shaped.
    pub fn schedule(&mut self, arrival: Instant, wire_bytes: usize) -> Option<Instant> {
        if self.shaping.is_none() {
            return None;
        }
        let start = match self.free_at {
            Some(free) if free > arrival => free,
            _ => arrival,
        };
        let free = start + self.shaping.transfer_time(wire_bytes);
        self.free_at = Some(free);
        Some(free + self.shaping.latency)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_serialised_and_delayed() {
        let shaping = Shaping {
            latency: Duration::from_millis(10),
            bandwidth_bits_per_sec: Some(8e6), // 1 byte per microsecond
        };
        let mut s = Shaper::new(shaping);
        let t0 = Instant::now();
        let d1 = s.schedule(t0, 1000).unwrap();
        assert_eq!(d1 - t0, Duration::from_millis(11));
        // Arrives while the link is still busy: queued behind the first frame.
        let d2 = s.schedule(t0 + Duration::from_micros(10), 1000).unwrap();
        assert_eq!(d2 - t0, Duration::from_millis(12));
        // Arrives after the link drained.
        let t3 = t0 + Duration::from_secs(1);
        assert_eq!(s.schedule(t3, 0).unwrap() - t3, Duration::from_millis(10));
        assert!(Shaper::new(Shaping::NONE).schedule(t0, 5).is_none());
    }
}
