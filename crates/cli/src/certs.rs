//! `doram certs`: a CA, one certificate and key per party, and a ready session config on one
//! host for local runs; `doram certs ca|request|sign` for deployments where every party makes
//! its own key on its own host.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use doram_core::PartyId;
use doram_net::certs::{
    Addresses, DEFAULT_VALID_DAYS, generate_ca, generate_local_with_services, request, sign,
};
use std::path::PathBuf;

/// Arguments of `doram certs`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CertsArgs {
    /// For a deployment on several hosts: a CA, requests and signatures, so that no host ever
    /// holds another party's key. Without a subcommand: everything for local runs, in one
    /// directory.
    #[command(subcommand)]
    pub cmd: Option<Deploy>,
    /// Directory to write ca.pem, party<i>.pem, party<i>.key and the config into (created if
    /// missing).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
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

/// The deployment steps.
#[derive(Debug, Subcommand)]
pub enum Deploy {
    /// On the CA operator's host: create ca.pem (for every host) and ca.key (mode 0600; it
    /// stays here and signs the parties' requests).
    ///
    /// Example: `doram certs ca --out ca`.
    Ca {
        /// Directory for ca.pem and ca.key (created if missing; an existing ca.key is never
        /// replaced).
        #[arg(long, short)]
        out: PathBuf,
        /// Days the CA certificate is valid.
        #[arg(long, default_value_t = DEFAULT_VALID_DAYS)]
        days: u32,
    },
    /// On a party's own host: create its key party<I>.key (mode 0600; it never leaves the host)
    /// and a signing request party<I>.csr for the CA operator.
    ///
    /// Example: `doram certs request --id 1 --address 10.0.0.2:7001 --out p1`.
    Request {
        /// The party (0–3).
        #[arg(long, value_parser = clap::value_parser!(u8).range(0..=3))]
        id: u8,
        /// Its DNS name in the configuration (default party<I>.doram).
        #[arg(long)]
        name: Option<String>,
        /// Addresses (`host:port`) the party listens or serves on; their hosts go into the
        /// certificate. Comma separated.
        #[arg(long = "address", value_delimiter = ',')]
        addresses: Vec<String>,
        /// Directory for the key and the request (created if missing; an existing key is never
        /// replaced).
        #[arg(long, short)]
        out: PathBuf,
    },
    /// On the CA operator's host: check a party's request (its signature, and that it names
    /// the party's DNS name first and host names or IP addresses only) and sign it.
    ///
    /// Example: `doram certs sign --ca ca --id 1 --csr party1.csr --out party1.pem`.
    Sign {
        /// Directory holding ca.pem and ca.key.
        #[arg(long)]
        ca: PathBuf,
        /// The party the request is for (0–3).
        #[arg(long, value_parser = clap::value_parser!(u8).range(0..=3))]
        id: u8,
        /// The party's DNS name in the configuration (default party<I>.doram).
        #[arg(long)]
        name: Option<String>,
        /// The request (party<I>.csr).
        #[arg(long)]
        csr: PathBuf,
        /// Days the certificate is valid.
        #[arg(long, default_value_t = DEFAULT_VALID_DAYS)]
        days: u32,
        /// Where to write the certificate.
        #[arg(long, short)]
        out: PathBuf,
    },
}

fn party(id: u8) -> Result<PartyId> {
    PartyId::try_from(id).context("--id must name a party 0 to 3")
}

fn deploy(cmd: &Deploy, json: bool) -> Result<()> {
    let files: Vec<PathBuf> = match cmd {
        Deploy::Ca { out, days } => {
            let (cert, key) = generate_ca(out, *days)?;
            if !json {
                println!(
                    "wrote {} (give it to every host) and {} (keep it here, offline if you can)",
                    cert.display(),
                    key.display()
                );
            }
            vec![cert, key]
        }
        Deploy::Request {
            id,
            name,
            addresses,
            out,
        } => {
            let addrs: Vec<&str> = addresses.iter().map(String::as_str).collect();
            let (key, csr) = request(out, party(*id)?, name.as_deref(), &addrs)?;
            if !json {
                println!(
                    "wrote {} (stays on this host) and {} (send it to the CA operator)",
                    key.display(),
                    csr.display()
                );
            }
            vec![key, csr]
        }
        Deploy::Sign {
            ca,
            id,
            name,
            csr,
            days,
            out,
        } => {
            let cert = sign(ca, csr, party(*id)?, name.as_deref(), *days, out)?;
            if !json {
                println!(
                    "wrote {}: give it to party {id} and to every host that pins it",
                    cert.display()
                );
            }
            vec![cert]
        }
    };
    if json {
        crate::report::print_json(&serde_json::json!({
            "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        }))?;
    }
    Ok(())
}

/// Runs `doram certs`.
pub fn run(args: &CertsArgs, json: bool) -> Result<()> {
    if let Some(cmd) = &args.cmd {
        return deploy(cmd, json);
    }
    let Some(out) = &args.out else {
        bail!("doram certs: give --out DIR (local runs) or a subcommand: ca, request, sign");
    };
    if !(2..=4).contains(&args.parties) {
        bail!("--parties must be 2, 3 or 4 (got {})", args.parties);
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
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
    let config = generate_local_with_services(out, args.parties, spec, services)?;
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
