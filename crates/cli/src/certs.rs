//! `doram certs`: a CA, one certificate and key per party, and a ready session config.

use anyhow::{Context, Result, bail};
use clap::Args;
use doram_net::certs::{Addresses, generate_local_with_services};
use std::path::PathBuf;

/// Arguments of `doram certs`.
#[derive(Debug, Args)]
pub struct CertsArgs {
    /// Directory to write ca.pem, party<i>.pem, party<i>.key and the config into (created if
    /// missing).
    #[arg(long, short)]
    pub out: PathBuf,
    /// Number of parties (2–4).
    #[arg(long, default_value_t = 3)]
    pub parties: usize,
    /// Listen addresses, one per party, comma separated (`host:port`); overrides --base-port.
    #[arg(long, value_delimiter = ',')]
    pub addresses: Vec<String>,
    /// Party i listens on 127.0.0.1:(base-port + i); without it, free ports are picked now.
    #[arg(long)]
    pub base_port: Option<u16>,
    /// Also give every party a service address for outside clients (e.g. `doram pir query`):
    /// free local ports, unless --service-addresses or --service-base-port say otherwise.
    #[arg(long)]
    pub services: bool,
    /// Service addresses, one per party, comma separated (implies --services).
    #[arg(long, value_delimiter = ',')]
    pub service_addresses: Vec<String>,
    /// Party i serves clients on 127.0.0.1:(service-base-port + i) (implies --services).
    #[arg(long)]
    pub service_base_port: Option<u16>,
}

/// Runs `doram certs`.
pub fn run(args: &CertsArgs, json: bool) -> Result<()> {
    if !(2..=4).contains(&args.parties) {
        bail!("--parties must be 2, 3 or 4 (got {})", args.parties);
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let spec = if !args.addresses.is_empty() {
        Addresses::Explicit(args.addresses.clone())
    } else if let Some(p) = args.base_port {
        Addresses::BasePort(p)
    } else {
        Addresses::FreeLocalPorts
    };
    let services = if !args.service_addresses.is_empty() {
        Some(Addresses::Explicit(args.service_addresses.clone()))
    } else if let Some(p) = args.service_base_port {
        Some(Addresses::BasePort(p))
    } else if args.services {
        Some(Addresses::FreeLocalPorts)
    } else {
        None
    };
    let config = generate_local_with_services(&args.out, args.parties, spec, services)?;
    if json {
        crate::report::print_json(&serde_json::json!({
            "config": config.display().to_string(),
            "parties": args.parties,
        }))?;
    } else {
        println!(
            "wrote a CA, {} party certificates and {}",
            args.parties,
            config.display()
        );
        println!(
            "run each party with: doram party --config {} --id <I> <job>",
            config.display()
        );
    }
    Ok(())
}
