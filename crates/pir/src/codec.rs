//! Canonical fixed-size encodings of views and the protocol messages.
//!
//! Every encoding is determined by the domain size n (and, for answers, the chunk count), which
//! the receiver knows beforehand; decoding rejects wrong lengths and non-canonical values, so
//! two views are equal exactly when their encodings are (spec §11 P4).
//!
//! | part | layout | bytes |
//! | --- | --- | --- |
//! | inputs | ⟨r⟩^B_b (u32) ‖ ⟨v⟩_b (2 × u64) ‖ seed (u128) | 36 |
//! | G outputs | σ^1..σ^n (u128 each) ‖ τ bits (2n bits, τ^{j,0} at bit 2(j−1)) ‖ γ (2 × u64) | 16n + ⌈n/4⌉ + 16 |
//! | G inputs | level XORs (2 × u128 per level, ẑ in bit 0) ‖ T_b (u32) ‖ W_b (2 × u64) | 32n + 20 |
//!
//! A partial view is inputs ‖ outputs (16n + ⌈n/4⌉ + 52 bytes, 377 at n = 20); a full view
//! is inputs ‖ G inputs ‖ outputs (48n + ⌈n/4⌉ + 72 bytes, 1,037 at n = 20). All integers are
//! little-endian.

use doram_field::Fp64;
use doram_prim::aes::Block;

use crate::PirError;
use crate::dpf::{Cw, FullView, GInputs, Inputs, Outputs, PartialView};

/// An append-only byte buffer.
#[derive(Default)]
pub(crate) struct Writer(pub Vec<u8>);

impl Writer {
    pub fn with_capacity(n: usize) -> Writer {
        Writer(Vec::with_capacity(n))
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u128(&mut self, v: Block) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn fp(&mut self, v: Fp64) -> &mut Self {
        self.u64(v.value())
    }
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
}

/// A bounds-checked reader over a peer's bytes.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], what: &'static str) -> Reader<'a> {
        Reader { bytes, what }
    }
    pub fn err(&self, reason: impl Into<String>) -> PirError {
        PirError::malformed(self.what, reason)
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], PirError> {
        if self.bytes.len() < n {
            return Err(self.err(format!(
                "truncated: needed {n} more bytes, {} left",
                self.bytes.len()
            )));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }
    fn array<const K: usize>(&mut self) -> Result<[u8; K], PirError> {
        let mut a = [0u8; K];
        a.copy_from_slice(self.take(K)?);
        Ok(a)
    }
    pub fn u8(&mut self) -> Result<u8, PirError> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, PirError> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32, PirError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64, PirError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub fn u128(&mut self) -> Result<Block, PirError> {
        Ok(Block::from_le_bytes(self.array()?))
    }
    pub fn fp(&mut self) -> Result<Fp64, PirError> {
        let v = self.u64()?;
        Fp64::new(v).ok_or_else(|| self.err("field element not below the modulus"))
    }
    pub fn seed(&mut self) -> Result<Block, PirError> {
        let s = self.u128()?;
        if s & 1 != 0 {
            return Err(self.err("seed with its control bit set"));
        }
        Ok(s)
    }
    pub fn finish(self) -> Result<(), PirError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(self.err(format!("{} trailing bytes", self.bytes.len())))
        }
    }
}

/// Encoded size of the inputs part.
pub const INPUTS_BYTES: usize = 36;

/// Encoded size of the G outputs for domain 2^n.
pub fn outputs_bytes(n: usize) -> usize {
    16 * n + (2 * n).div_ceil(8) + 16
}

/// Encoded size of the G inputs for domain 2^n.
pub fn g_inputs_bytes(n: usize) -> usize {
    32 * n + 20
}

/// Encoded size of a partial view.
pub fn partial_view_bytes(n: usize) -> usize {
    INPUTS_BYTES + outputs_bytes(n)
}

/// Encoded size of a full view.
pub fn full_view_bytes(n: usize) -> usize {
    INPUTS_BYTES + g_inputs_bytes(n) + outputs_bytes(n)
}

pub(crate) fn put_inputs(w: &mut Writer, i: &Inputs) {
    w.u32(i.r_share)
        .fp(i.v_share[0])
        .fp(i.v_share[1])
        .u128(i.seed);
}

pub(crate) fn get_inputs(r: &mut Reader<'_>, n: usize) -> Result<Inputs, PirError> {
    let r_share = r.u32()?;
    if n < 32 && r_share >> n != 0 {
        return Err(r.err("share of r wider than the domain"));
    }
    Ok(Inputs {
        r_share,
        v_share: [r.fp()?, r.fp()?],
        seed: r.seed()?,
    })
}

pub(crate) fn put_outputs(w: &mut Writer, o: &Outputs) {
    for cw in &o.cws {
        w.u128(cw.sigma);
    }
    let mut bits = vec![0u8; (2 * o.cws.len()).div_ceil(8)];
    for (j, cw) in o.cws.iter().enumerate() {
        for c in 0..2 {
            if cw.tau[c] {
                let k = 2 * j + c;
                bits[k / 8] |= 1 << (k % 8);
            }
        }
    }
    w.bytes(&bits).fp(o.gamma[0]).fp(o.gamma[1]);
}

pub(crate) fn get_outputs(r: &mut Reader<'_>, n: usize) -> Result<Outputs, PirError> {
    let mut sigmas = Vec::with_capacity(n);
    for _ in 0..n {
        sigmas.push(r.seed()?);
    }
    let bits = r.take((2 * n).div_ceil(8))?;
    let bit = |k: usize| bits[k / 8] >> (k % 8) & 1 == 1;
    if (2 * n..bits.len() * 8).any(bit) {
        return Err(r.err("padding bits set"));
    }
    let cws = sigmas
        .into_iter()
        .enumerate()
        .map(|(j, sigma)| Cw {
            sigma,
            tau: [bit(2 * j), bit(2 * j + 1)],
        })
        .collect();
    Ok(Outputs {
        cws,
        gamma: [r.fp()?, r.fp()?],
    })
}

pub(crate) fn put_g_inputs(w: &mut Writer, g: &GInputs) {
    for l in &g.levels {
        w.u128(l[0]).u128(l[1]);
    }
    w.u32(g.t_sum).fp(g.w_sum[0]).fp(g.w_sum[1]);
}

pub(crate) fn get_g_inputs(r: &mut Reader<'_>, n: usize) -> Result<GInputs, PirError> {
    let mut levels = Vec::with_capacity(n);
    for _ in 0..n {
        levels.push([r.u128()?, r.u128()?]);
    }
    let t_sum = r.u32()?;
    if u64::from(t_sum) > 1u64 << n {
        return Err(r.err("T_b larger than the domain"));
    }
    Ok(GInputs {
        levels,
        t_sum,
        w_sum: [r.fp()?, r.fp()?],
    })
}

/// Encodes a partial view.
pub fn encode_partial(v: &PartialView) -> Vec<u8> {
    let n = v.outputs.cws.len();
    let mut w = Writer::with_capacity(partial_view_bytes(n));
    put_inputs(&mut w, &v.inputs);
    put_outputs(&mut w, &v.outputs);
    w.0
}

/// Decodes a partial view for domain 2^n.
pub fn decode_partial(bytes: &[u8], n: usize) -> Result<PartialView, PirError> {
    let mut r = Reader::new(bytes, "partial view");
    let v = PartialView {
        inputs: get_inputs(&mut r, n)?,
        outputs: get_outputs(&mut r, n)?,
    };
    r.finish()?;
    Ok(v)
}

/// Encodes a full view.
pub fn encode_full(v: &FullView) -> Vec<u8> {
    let mut w = Writer::with_capacity(full_view_bytes(v.domain_bits()));
    put_full(&mut w, v);
    w.0
}

pub(crate) fn put_full(w: &mut Writer, v: &FullView) {
    put_inputs(w, &v.inputs);
    put_g_inputs(w, &v.g_inputs);
    put_outputs(w, &v.outputs);
}

pub(crate) fn get_full(r: &mut Reader<'_>, n: usize) -> Result<FullView, PirError> {
    Ok(FullView {
        inputs: get_inputs(r, n)?,
        g_inputs: get_g_inputs(r, n)?,
        outputs: get_outputs(r, n)?,
    })
}

/// Decodes a full view for domain 2^n.
pub fn decode_full(bytes: &[u8], n: usize) -> Result<FullView, PirError> {
    let mut r = Reader::new(bytes, "full view");
    let v = get_full(&mut r, n)?;
    r.finish()?;
    Ok(v)
}

/// S_2's pair of views with one copy of the shared G outputs (PIR-GOD §4.2):
/// outputs ‖ inputs_0 ‖ G inputs_0 ‖ inputs_1 ‖ G inputs_1.
pub(crate) fn put_pair(w: &mut Writer, views: [&FullView; 2]) {
    put_outputs(w, &views[0].outputs);
    for v in views {
        put_inputs(w, &v.inputs);
        put_g_inputs(w, &v.g_inputs);
    }
}

pub(crate) fn get_pair(r: &mut Reader<'_>, n: usize) -> Result<[FullView; 2], PirError> {
    let outputs = get_outputs(r, n)?;
    let one = |r: &mut Reader<'_>| -> Result<FullView, PirError> {
        Ok(FullView {
            inputs: get_inputs(r, n)?,
            g_inputs: get_g_inputs(r, n)?,
            outputs: outputs.clone(),
        })
    };
    Ok([one(r)?, one(r)?])
}

/// Encoded size of a view pair.
pub fn pair_bytes(n: usize) -> usize {
    outputs_bytes(n) + 2 * (INPUTS_BYTES + g_inputs_bytes(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpf::generate;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn views_round_trip_and_sizes() {
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        for n in [1usize, 3, 8, 20] {
            let g = generate(n as u8, &mut rng);
            let full = encode_full(&g.views[1]);
            assert_eq!(full.len(), full_view_bytes(n));
            assert_eq!(decode_full(&full, n).expect("decodes"), g.views[1]);
            let part = encode_partial(&g.views[0].partial());
            assert_eq!(part.len(), partial_view_bytes(n));
            assert_eq!(
                decode_partial(&part, n).expect("decodes"),
                g.views[0].partial()
            );
            let mut w = Writer::default();
            put_pair(&mut w, [&g.views[0], &g.views[1]]);
            assert_eq!(w.0.len(), pair_bytes(n));
            let mut r = Reader::new(&w.0, "pair");
            assert_eq!(get_pair(&mut r, n).expect("decodes"), g.views);
            r.finish().expect("exact");
            // Wrong length, wrong n, non-canonical values are rejected.
            assert!(decode_full(&full[..full.len() - 1], n).is_err());
            assert!(decode_full(&full, n + 1).is_err());
            let mut bad = full.clone();
            bad[INPUTS_BYTES - 16] |= 1; // seed control bit
            assert!(decode_full(&bad, n).is_err());
            let mut bad = full.clone();
            bad[4..12].copy_from_slice(&u64::MAX.to_le_bytes()); // ⟨v⟩ ≥ p
            assert!(decode_full(&bad, n).is_err());
        }
        // The sizes of spec §9.3 at n = 20: 375.5 B partial, 1,042 B full (formula).
        assert_eq!(partial_view_bytes(20), 377);
        assert_eq!(full_view_bytes(20), 1037);
    }
}
