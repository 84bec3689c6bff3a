//! The sub-protocols' functionalities in plaintext (FJKW15 §3; notes §4): what each protocol
//! must output, computed directly from all parties' inputs. Tests run the protocols against
//! these.

use crate::bits::Strings;
use crate::shift::ShiftMap;

/// SS-COT\[N\]: every (t, m_t) with a_t = b_t, t counting from 0.
pub fn ss_cot(m: &Strings, a: &[u128], b: &[u128]) -> Vec<(usize, Vec<u8>)> {
    (0..m.count())
        .filter(|&t| a[t] == b[t])
        .map(|t| (t, m.get(t).to_vec()))
        .collect()
}

/// SS-IOT[2^τ]: (j, m_j) with j = j_S ⊕ j_H.
pub fn ss_iot(m: &Strings, j_s: usize, j_h: usize) -> (usize, Vec<u8>) {
    let j = j_s ^ j_h;
    (j, m.get(j).to_vec())
}

/// XOT[N choose k]: z_σ = m_{i_σ} ⊕ δ_σ.
pub fn xot(m: &Strings, i: &[usize], delta: &Strings) -> Strings {
    let mut z = m.gather(i);
    z.xor_assign(delta);
    z
}

/// SS-XOT[N choose k]: the secret (m_{i_1}, …, m_{i_k}) of the output sharing, from the
/// input shares.
pub fn ss_xot(share_a: &Strings, share_b: &Strings, i: &[usize]) -> Strings {
    share_a.xor(share_b).gather(i)
}

/// Shift: the secret Π(X) of the output sharing, from the input shares.
pub fn shift(map: &ShiftMap, x_a: &Strings, x_b: &Strings) -> Strings {
    map.apply(&x_a.xor(x_b))
}
