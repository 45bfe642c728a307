//! The [`Signal`]: a toy strategy at the end of the chain. After a large
//! trade it sends an [`Order`] to order out by `send`, so the write never
//! stalls the group. Its only input, [`TopOfBook`], carries no time.

use kaspar::prelude::*;

use super::TopOfBook;
use crate::tick_to_book::feed::{self, Stream};
use crate::tick_to_book::pipeline::{Counters, Order, OrderOut};

/// Connects the signal to order out.
pub struct ToOrderOut(pub Addr<OrderOut>);

/// A toy signal: after a large trade, join the side that traded at the
/// touch. Its only job here is to sit at the end of the chain and to reach
/// the order-out thread by `send`.
#[actor]
#[derive(Default)]
pub struct Signal {
    order_out: Option<Addr<OrderOut>>,
    updates: u64,
    orders: u64,
}

#[actor]
impl Signal {
    #[handler(ToOrderOut)]
    fn wire(&mut self, msg: ToOrderOut, _ctx: &mut Ctx<Self>) {
        self.order_out = Some(msg.0);
    }

    #[handler(TopOfBook)]
    fn top(&mut self, msg: TopOfBook, _ctx: &mut Ctx<Self>) {
        self.updates += 1;
        if msg.stream != Stream::Trade {
            return;
        }
        let (Some(trade), Some(bid), Some(ask), Some(out)) =
            (msg.last_trade, msg.bid, msg.ask, &self.order_out)
        else {
            return;
        };
        if trade.size >= 190 {
            let side = if trade.price >= ask.price {
                feed::Side::Bid
            } else {
                feed::Side::Ask
            };
            let price = if side == feed::Side::Bid {
                bid.price
            } else {
                ask.price
            };
            // Asynchronous by design: the write must not stall the group.
            if out
                .send(Order {
                    security_id: msg.security_id,
                    side,
                    price,
                    size: 1,
                })
                .is_ok()
            {
                self.orders += 1;
            }
        }
    }

    /// (updates seen, orders sent).
    #[handler(Counters)]
    fn counters(&mut self, _msg: Counters, _ctx: &mut Ctx<Self>) -> (u64, u64) {
        (self.updates, self.orders)
    }
}
