//! The three-server PIR's messages and database files.

use doram_pir::fuzzing;

use crate::Target;

fn prefixed(prefix: &[u8], seeds: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    seeds.into_iter().map(|s| [prefix, &s].concat()).collect()
}

/// What a server reads: `domain bits ‖ message`.
pub const SERVER_INPUT: Target = Target {
    name: "pir-server-input",
    what: "PIR requests from clients and S2's partial views (regenerated as a key holder does)",
    run: |data| {
        let bits = data.first().copied().unwrap_or(1);
        fuzzing::server_input(data.get(1..).unwrap_or(&[]), bits);
        Ok(())
    },
    seeds: || {
        let mut out = prefixed(&[4], fuzzing::message_seeds(4));
        out.extend(prefixed(&[9], fuzzing::message_seeds(9)));
        out
    },
};

/// What a client reads: `domain bits ‖ record size ‖ message`.
pub const CLIENT_INPUT: Target = Target {
    name: "pir-client-input",
    what: "PIR server replies: description, views, answers, records in the clear with their Merkle paths",
    run: |data| {
        let bits = data.first().copied().unwrap_or(1);
        let record_size = usize::from(data.get(1).copied().unwrap_or(8)).max(1);
        fuzzing::client_input(data.get(2..).unwrap_or(&[]), bits, record_size);
        Ok(())
    },
    seeds: || {
        let mut out = prefixed(&[4, 8], fuzzing::message_seeds(4));
        out.extend(prefixed(&[9, 8], fuzzing::message_seeds(9)));
        out
    },
};

/// A database file as `doram pir build-db` writes it.
pub const DATABASE: Target = Target {
    name: "pir-database",
    what: "PIR database files (header, digest, records)",
    run: |data| {
        fuzzing::database_file(data);
        Ok(())
    },
    seeds: fuzzing::database_seeds,
};
