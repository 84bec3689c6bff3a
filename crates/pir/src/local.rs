//! All three servers in one process, connected by in-process sessions: for tests, examples
//! and the benchmark. The servers run exactly the code of a networked deployment
//! ([`Server::serve`] with the offline loop); only the transport differs.

use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use doram_core::PartyId;
use doram_net::service::SERVICE_CLIENT;
use doram_net::{LocalMesh, Shaping, Tamper};

use crate::PirError;
use crate::behaviour::Behaviour;
use crate::client::{Client, ClientOptions, Connector, Network};
use crate::db::Database;
use crate::proto::ServerId;
use crate::server::{ServeReport, Server, ServerConfig};

/// Direction of a tapped client–server message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Client → server.
    ToServer,
    /// Server → client.
    ToClient,
}

/// A wire tap: sees every client–server payload (`server`, direction, bytes).
pub type Tap = dyn Fn(ServerId, Direction, &[u8]) + Send + Sync;

/// A transport-level fault injector on client connections: decides the fate of each frame
/// (`server`, direction, index of the frame on that link and direction, payload).
pub type Injector = dyn Fn(ServerId, Direction, u64, &mut Vec<u8>) -> Tamper + Send + Sync;

/// Settings of a [`LocalCluster`].
#[derive(Clone)]
pub struct LocalOptions {
    /// Offline pool size of S_2.
    pub pool_size: usize,
    /// How long servers wait for offline material.
    pub instance_wait: Duration,
    /// The client's whole-query deadline.
    pub client_timeout: Duration,
    /// What silence means to the client.
    pub network: Network,
    /// Shaping of every link.
    pub shaping: Shaping,
    /// Optional wire tap on client connections.
    pub tap: Option<Arc<Tap>>,
    /// Optional transport fault injection on client connections (after the tap).
    pub inject: Option<Arc<Injector>>,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            pool_size: 2,
            instance_wait: Duration::from_secs(5),
            client_timeout: Duration::from_secs(10),
            network: Network::Asynchronous,
            shaping: Shaping::default(),
            tap: None,
            inject: None,
        }
    }
}

impl std::fmt::Debug for LocalOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalOptions")
            .field("pool_size", &self.pool_size)
            .field("instance_wait", &self.instance_wait)
            .field("client_timeout", &self.client_timeout)
            .field("network", &self.network)
            .field("tapped", &self.tap.is_some())
            .field("injecting", &self.inject.is_some())
            .finish_non_exhaustive()
    }
}

/// Three servers on threads of this process.
#[derive(Debug)]
pub struct LocalCluster {
    servers: [Server; 3],
    connect: [Sender<doram_net::Session>; 3],
    threads: Vec<JoinHandle<Result<ServeReport, PirError>>>,
    options: LocalOptions,
}

impl LocalCluster {
    /// Starts honest servers on `db`.
    pub fn honest(db: Arc<Database>, options: LocalOptions) -> Result<LocalCluster, PirError> {
        LocalCluster::start(
            [db.clone(), db.clone(), db],
            [Behaviour::Honest, Behaviour::Honest, Behaviour::Honest],
            options,
        )
    }

    /// Starts S_i with database `dbs[i]` and behaviour `behaviours[i]`.
    pub fn start(
        dbs: [Arc<Database>; 3],
        behaviours: [Behaviour; 3],
        options: LocalOptions,
    ) -> Result<LocalCluster, PirError> {
        let mesh = LocalMesh::new(3)
            .timeout(Duration::from_secs(30))
            .shaping(options.shaping)
            .build();
        let mut threads = Vec::with_capacity(3);
        let mut servers = Vec::with_capacity(3);
        let mut connect = Vec::with_capacity(3);
        let [d0, d1, d2] = dbs;
        let [b0, b1, b2] = behaviours;
        for ((id, (db, behaviour)), m) in ServerId::ALL
            .into_iter()
            .zip([(d0, b0), (d1, b1), (d2, b2)])
            .zip(mesh)
        {
            let mut config = ServerConfig::new(id);
            config.pool_size = options.pool_size;
            config.instance_wait = options.instance_wait;
            let server = Server::new(config, db, behaviour);
            let (tx, rx) = mpsc::channel();
            let s = server.clone();
            let t = thread::Builder::new()
                .name(format!("pir {id}"))
                .spawn(move || s.serve(Some(m), rx))
                .map_err(|e| PirError::Invalid(format!("cannot spawn a server: {e}")))?;
            threads.push(t);
            servers.push(server);
            connect.push(tx);
        }
        let servers: [Server; 3] = servers
            .try_into()
            .map_err(|_| PirError::Invalid("three servers".into()))?;
        let connect: [Sender<doram_net::Session>; 3] = connect
            .try_into()
            .map_err(|_| PirError::Invalid("three servers".into()))?;
        Ok(LocalCluster {
            servers,
            connect,
            threads,
            options,
        })
    }

    /// The servers.
    pub fn servers(&self) -> &[Server; 3] {
        &self.servers
    }

    /// Waits until S_2's pool and both holders' stores have at least `k` instances (or
    /// `timeout` passes); returns whether they do.
    pub fn wait_ready(&self, k: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.servers.iter().all(|s| s.pool_len() >= k) {
                return true;
            }
            thread::sleep(Duration::from_millis(2));
        }
        false
    }

    /// A new client connected to all three servers (it reconnects through the cluster).
    pub fn client(&self) -> Result<Client, PirError> {
        Client::with_connector(
            self.connector(),
            ClientOptions {
                timeout: self.options.client_timeout,
                network: self.options.network,
            },
        )
    }

    /// Makes in-process client connections to the servers (with the options' shaping, tap
    /// and injection).
    pub fn connector(&self) -> Arc<Connector> {
        let senders = self.connect.clone();
        let options = self.options.clone();
        Arc::new(move |id: ServerId, budget: Duration| {
            let mut mesh = LocalMesh::new(2).timeout(budget).shaping(options.shaping);
            let tap = options.tap.clone();
            let inject = options.inject.clone();
            if tap.is_some() || inject.is_some() {
                mesh = mesh.tamper(move |from: PartyId, _to, k, payload: &mut Vec<u8>| {
                    let dir = if from == SERVICE_CLIENT {
                        Direction::ToServer
                    } else {
                        Direction::ToClient
                    };
                    if let Some(t) = &tap {
                        t(id, dir, payload);
                    }
                    match &inject {
                        Some(f) => f(id, dir, k, payload),
                        None => Tamper::Pass,
                    }
                });
            }
            let mut pair = mesh.build();
            let server_side = pair.pop();
            let client_side = pair.pop();
            match (client_side, server_side) {
                (Some(c), Some(s)) => {
                    // A server that has stopped just leaves the client unanswered.
                    let _ = senders[id.index()].send(s);
                    Ok(c)
                }
                _ => Err("cannot build an in-process link".into()),
            }
        })
    }

    /// Shuts every server down and returns their reports.
    pub fn shutdown(self) -> Vec<Result<ServeReport, PirError>> {
        for s in &self.servers {
            s.shutdown_handle().shutdown();
        }
        drop(self.connect);
        self.threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err(PirError::Invalid("a server thread panicked".into())))
            })
            .collect()
    }
}
