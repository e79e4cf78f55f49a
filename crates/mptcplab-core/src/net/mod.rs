pub mod link;
pub mod loss;
pub mod packet;

pub use link::{LinkDir, LinkChange, Offer};
pub use packet::{Packet, PacketKind};

/// A route: link directions traversed in order.
#[derive(Clone, Debug)]
pub struct Route {
    pub hops: Vec<u32>,
}
