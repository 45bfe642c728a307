//! Order out: the [`Order`] the signal sends, and [`OrderOut`], the
//! standalone actor that writes it to the exchange session (a loopback UDP
//! socket) and/or records it in an [`OrderLog`], as the simulation does.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};

use kaspar::prelude::*;

use crate::tick_to_book::feed;
use crate::tick_to_book::pipeline::Counters;

/// An order for the order-management actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Order {
    /// The instrument.
    pub security_id: i32,
    /// Buy or sell.
    pub side: feed::Side,
    /// Limit price.
    pub price: i64,
    /// Quantity.
    pub size: i32,
}

/// Every order an [`OrderOut`] received, in the order it received them.
pub type OrderLog = Arc<Mutex<Vec<Order>>>;

/// Order management: encodes each order and writes it to the exchange
/// session (a loopback UDP socket standing in for iLink's TCP), and/or
/// records it in an [`OrderLog`].
#[actor]
pub struct OrderOut {
    session: Option<(UdpSocket, SocketAddr)>,
    log: Option<OrderLog>,
    sent: u64,
}

impl OrderOut {
    /// Writes orders to `to`.
    pub fn new(to: SocketAddr) -> io::Result<Self> {
        Ok(OrderOut {
            session: Some((UdpSocket::bind("127.0.0.1:0")?, to)),
            log: None,
            sent: 0,
        })
    }

    /// Records orders in `log` and writes them nowhere: the order side of
    /// a simulation.
    pub fn recording(log: OrderLog) -> Self {
        OrderOut {
            session: None,
            log: Some(log),
            sent: 0,
        }
    }

    /// Also records every order in `log`.
    pub fn with_log(mut self, log: OrderLog) -> Self {
        self.log = Some(log);
        self
    }
}

#[actor]
impl OrderOut {
    #[handler(Order)]
    fn order(&mut self, msg: Order, _ctx: &mut Ctx<Self>) {
        if let Some(log) = &self.log {
            log.lock().unwrap_or_else(|e| e.into_inner()).push(msg);
        }
        let Some((socket, to)) = &self.session else {
            return;
        };
        let mut wire = [0u8; 17];
        wire[..4].copy_from_slice(&msg.security_id.to_le_bytes());
        wire[4] = (msg.side == feed::Side::Ask) as u8;
        wire[5..13].copy_from_slice(&msg.price.to_le_bytes());
        wire[13..].copy_from_slice(&msg.size.to_le_bytes());
        if socket.send_to(&wire, *to).is_ok() {
            self.sent += 1;
        }
    }

    #[handler(Counters)]
    fn counters(&mut self, _msg: Counters, _ctx: &mut Ctx<Self>) -> u64 {
        self.sent
    }
}
