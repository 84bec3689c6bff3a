//! Where the AES-NI code runs in the default build (for any x86-64): inside a function compiled
//! for the CPU's vector extensions together with AES-NI, chosen at run time through `pulp`
//! (x86-64-v4 with AVX-512 and VAES, x86-64-v3 with AVX2 and VAES, x86-64-v3, or x86-64-v2), so
//! that the inlined cipher loops get the instructions, 32 vector registers and three-operand
//! forms where the CPU has them. On the levels with VAES, loops over batches run two blocks per
//! AES instruction ([`Context::run_either`]). A build with the `aes` target feature
//! (`-C target-cpu=native`) has them everywhere and runs the code in place.

#[cfg(not(target_feature = "aes"))]
mod dispatch {
    use doram_arch::Vaes;

    pulp::simd_type!({
        /// x86-64-v4 (AVX-512) with AES-NI and the vector AES instructions.
        struct VaesV4 {
            sse: f!("sse"),
            sse2: f!("sse2"),
            fxsr: f!("fxsr"),
            sse3: f!("sse3"),
            ssse3: f!("ssse3"),
            sse4_1: f!("sse4.1"),
            sse4_2: f!("sse4.2"),
            popcnt: f!("popcnt"),
            avx: f!("avx"),
            avx2: f!("avx2"),
            bmi1: f!("bmi1"),
            bmi2: f!("bmi2"),
            fma: f!("fma"),
            lzcnt: f!("lzcnt"),
            avx512f: f!("avx512f"),
            avx512bw: f!("avx512bw"),
            avx512cd: f!("avx512cd"),
            avx512dq: f!("avx512dq"),
            avx512vl: f!("avx512vl"),
            aes: f!("aes"),
            vaes: f!("vaes"),
        }
    });

    pulp::simd_type!({
        /// x86-64-v3 (AVX2) with AES-NI and the vector AES instructions.
        struct VaesV3 {
            sse: f!("sse"),
            sse2: f!("sse2"),
            fxsr: f!("fxsr"),
            sse3: f!("sse3"),
            ssse3: f!("ssse3"),
            sse4_1: f!("sse4.1"),
            sse4_2: f!("sse4.2"),
            popcnt: f!("popcnt"),
            avx: f!("avx"),
            avx2: f!("avx2"),
            bmi1: f!("bmi1"),
            bmi2: f!("bmi2"),
            fma: f!("fma"),
            lzcnt: f!("lzcnt"),
            aes: f!("aes"),
            vaes: f!("vaes"),
        }
    });

    pulp::simd_type!({
        /// x86-64-v3 (AVX2) with AES-NI.
        struct AesV3 {
            sse: f!("sse"),
            sse2: f!("sse2"),
            fxsr: f!("fxsr"),
            sse3: f!("sse3"),
            ssse3: f!("ssse3"),
            sse4_1: f!("sse4.1"),
            sse4_2: f!("sse4.2"),
            popcnt: f!("popcnt"),
            avx: f!("avx"),
            avx2: f!("avx2"),
            bmi1: f!("bmi1"),
            bmi2: f!("bmi2"),
            fma: f!("fma"),
            lzcnt: f!("lzcnt"),
            aes: f!("aes"),
        }
    });

    pulp::simd_type!({
        /// x86-64-v2 with AES-NI (the oldest CPUs that have AES-NI).
        struct AesV2 {
            sse: f!("sse"),
            sse2: f!("sse2"),
            fxsr: f!("fxsr"),
            sse3: f!("sse3"),
            ssse3: f!("ssse3"),
            sse4_1: f!("sse4.1"),
            sse4_2: f!("sse4.2"),
            popcnt: f!("popcnt"),
            aes: f!("aes"),
        }
    });

    /// The widest feature set of this CPU that includes AES-NI, checked once when a cipher is
    /// keyed.
    #[derive(Clone, Copy, Debug)]
    pub(in crate::aes) struct Context(Level);

    #[derive(Clone, Copy, Debug)]
    enum Level {
        VaesV4(VaesV4, Vaes),
        VaesV3(VaesV3, Vaes),
        V3(AesV3),
        V2(AesV2),
    }

    impl Context {
        /// The context for this CPU, if it has AES-NI.
        pub(in crate::aes) fn detect() -> Option<Context> {
            let vaes = Vaes::detect();
            let level = if let (Some(s), Some(v)) = (VaesV4::try_new(), vaes) {
                Level::VaesV4(s, v)
            } else if let (Some(s), Some(v)) = (VaesV3::try_new(), vaes) {
                Level::VaesV3(s, v)
            } else if let Some(s) = AesV3::try_new() {
                Level::V3(s)
            } else {
                Level::V2(AesV2::try_new()?)
            };
            Some(Context(level))
        }

        /// Runs `f` inside a function compiled with this context's features.
        #[inline(always)]
        pub(in crate::aes) fn run<R>(self, f: impl FnMut() -> R) -> R {
            match self.0 {
                Level::VaesV4(s, _) => s.vectorize(Body(f)),
                Level::VaesV3(s, _) => s.vectorize(Body(f)),
                Level::V3(s) => s.vectorize(Body(f)),
                Level::V2(s) => s.vectorize(Body(f)),
            }
        }

        /// Runs `narrow(state)` or, where the CPU has the vector AES instructions,
        /// `wide(state, token)`, inside a function compiled with this context's features.
        #[inline(always)]
        pub(in crate::aes) fn run_either<T, R>(
            self,
            state: T,
            narrow: impl FnOnce(T) -> R,
            wide: impl FnOnce(T, Vaes) -> R,
        ) -> R {
            let mut state = Some((state, narrow, wide));
            let mut take = move || state.take().expect("the context runs its body once");
            match self.0 {
                Level::VaesV4(s, v) => s.vectorize(Body(
                    #[inline(always)]
                    || {
                        let (t, _, w) = take();
                        w(t, v)
                    },
                )),
                Level::VaesV3(s, v) => s.vectorize(Body(
                    #[inline(always)]
                    || {
                        let (t, _, w) = take();
                        w(t, v)
                    },
                )),
                Level::V3(s) => s.vectorize(Body(
                    #[inline(always)]
                    || {
                        let (t, n, _) = take();
                        n(t)
                    },
                )),
                Level::V2(s) => s.vectorize(Body(
                    #[inline(always)]
                    || {
                        let (t, n, _) = take();
                        n(t)
                    },
                )),
            }
        }
    }

    /// A closure as `pulp` runs it. Called through `FnMut`, so that the closure's own body (and
    /// its `#[inline(always)]`) is what gets inlined; `FnOnce::call_once` of a closure is a
    /// shim that the compiler may leave out of line, compiled without the features.
    struct Body<F>(F);

    impl<R, F: FnMut() -> R> pulp::NullaryFnOnce for Body<F> {
        type Output = R;

        #[inline(always)]
        fn call(mut self) -> R {
            (self.0)()
        }
    }
}

#[cfg(target_feature = "aes")]
mod dispatch {
    use doram_arch::Vaes;

    /// The whole build has AES-NI: code runs where it stands.
    #[derive(Clone, Copy, Debug)]
    pub(in crate::aes) struct Context;

    impl Context {
        /// Always present in a build with the `aes` target feature.
        pub(in crate::aes) fn detect() -> Option<Context> {
            Some(Context)
        }

        /// Runs `f` directly.
        #[inline(always)]
        pub(in crate::aes) fn run<R>(self, mut f: impl FnMut() -> R) -> R {
            f()
        }

        /// Runs `wide(state, token)` if the build has the vector AES instructions and AVX2,
        /// else `narrow(state)`.
        #[inline(always)]
        pub(in crate::aes) fn run_either<T, R>(
            self,
            state: T,
            narrow: impl FnOnce(T) -> R,
            wide: impl FnOnce(T, Vaes) -> R,
        ) -> R {
            match Vaes::detect() {
                Some(v) if cfg!(all(target_feature = "vaes", target_feature = "avx2")) => {
                    wide(state, v)
                }
                _ => narrow(state),
            }
        }
    }
}

pub(super) use dispatch::Context;
