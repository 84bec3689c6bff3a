//! Where the AES-NI code runs in a portable build: inside a function compiled for the CPU's
//! vector extensions together with AES-NI, chosen at run time through `pulp` (x86-64-v4 with
//! AVX-512, x86-64-v3 with AVX2, or x86-64-v2), so that the inlined cipher loops get the
//! instructions, 32 vector registers and three-operand forms where the CPU has them. A build
//! with the `aes` target feature (`-C target-cpu=native`) has them everywhere and runs the code
//! in place.

#[cfg(not(target_feature = "aes"))]
mod dispatch {
    pulp::simd_type!({
        /// x86-64-v4 (AVX-512) with AES-NI.
        struct AesV4 {
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
        V4(AesV4),
        V3(AesV3),
        V2(AesV2),
    }

    impl Context {
        /// The context for this CPU, if it has AES-NI.
        pub(in crate::aes) fn detect() -> Option<Context> {
            let level = if let Some(s) = AesV4::try_new() {
                Level::V4(s)
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
                Level::V4(s) => s.vectorize(Body(f)),
                Level::V3(s) => s.vectorize(Body(f)),
                Level::V2(s) => s.vectorize(Body(f)),
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
    }
}

pub(super) use dispatch::Context;
