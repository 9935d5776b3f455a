//! The HTTP/1 accept loop: hyper's connection builder under the router, so
//! that a client must send its request headers within a bound
//! (`header_read_timeout`; axum's own `serve` leaves hyper's 30 s, which let
//! 100 trickling connections sit for half a minute), with a graceful
//! shutdown: on the signal, stop accepting, let every connection finish its
//! request in flight, then return.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Serves `app` on `listener` until `shutdown` completes and every open
/// connection has finished its request.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_read_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    // Every connection task holds a receiver of `stop`; `closed()` on the
    // sender resolves when the last one is dropped.
    let (stop, stopping) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let socket = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => socket,
                Err(e) => {
                    // Out of file descriptors and the like: keep serving the
                    // open connections, try again shortly.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(app.clone());
        let mut stopping = stopping.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_read_timeout);
            let conn = builder.serve_connection(TokioIo::new(socket), service);
            let mut conn = std::pin::pin!(conn);
            loop {
                tokio::select! {
                    _ = conn.as_mut() => break,
                    // Finish the request in flight, then close.
                    Ok(()) = stopping.changed() => conn.as_mut().graceful_shutdown(),
                }
            }
        });
    }
    drop(listener);
    let _ = stop.send(true);
    drop(stopping);
    stop.closed().await;
}
