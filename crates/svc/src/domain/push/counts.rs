//! Each send's messages counted by status and receipt, kept in the send's
//! row by every write that changes them, in that write's transaction: GET
//! /send/{id} reads one row however many recipients the send has.

use keel_platform::sea_orm::sea_query::{Expr, ExprTrait};
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, QueryFilter, QuerySelect,
};

use crate::entity::push_message::{self, MessageStatus, ReceiptStatus};
use crate::entity::push_send;

/// Changes to a send's counts, in the order of [`COLUMNS`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Delta {
    changes: [i64; 8],
}

/// The counts a send keeps.
const COLUMNS: [push_send::Column; 8] = [
    push_send::Column::NPending,
    push_send::Column::NQueued,
    push_send::Column::NSent,
    push_send::Column::NFailed,
    push_send::Column::NCancelled,
    push_send::Column::NSkipped,
    push_send::Column::NReceiptsOk,
    push_send::Column::NReceiptsError,
];

impl Delta {
    /// `n` messages moved from one status to another.
    pub fn moved(&mut self, from: MessageStatus, to: MessageStatus, n: u64) -> &mut Self {
        if from != to {
            self.changes[status_index(from)] -= to_i64(n);
            self.changes[status_index(to)] += to_i64(n);
        }
        self
    }

    /// `n` receipts newly in.
    pub fn receipts(&mut self, status: ReceiptStatus, n: u64) -> &mut Self {
        self.changes[receipt_index(status)] += to_i64(n);
        self
    }

    /// Adds the changes to the send's counts (one statement).
    pub async fn apply<C: ConnectionTrait>(&self, conn: &C, send_id: &str) -> Result<(), DbErr> {
        if self.changes.iter().all(|n| *n == 0) {
            return Ok(());
        }
        let mut update = push_send::Entity::update_many();
        for (column, n) in COLUMNS.into_iter().zip(self.changes) {
            if n != 0 {
                update = update.col_expr(column, Expr::col(column).add(n));
            }
        }
        update
            .filter(push_send::Column::Id.eq(send_id))
            .exec(conn)
            .await?;
        Ok(())
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn status_index(status: MessageStatus) -> usize {
    match status {
        MessageStatus::Pending => 0,
        MessageStatus::Batched => 1,
        MessageStatus::Sent => 2,
        MessageStatus::Error => 3,
        MessageStatus::Cancelled => 4,
        MessageStatus::Skipped => 5,
    }
}

fn receipt_index(status: ReceiptStatus) -> usize {
    match status {
        ReceiptStatus::Ok => 6,
        ReceiptStatus::Error => 7,
    }
}

/// The statuses of these messages of a send as they are now, read in the
/// writing transaction (locked on PostgreSQL, so a concurrent cancel waits
/// for it rather than changing them under it).
pub async fn statuses<C: ConnectionTrait>(
    conn: &C,
    send_id: &str,
    tokens: &[&str],
) -> Result<Vec<(String, MessageStatus)>, DbErr> {
    let mut query = push_message::Entity::find()
        .select_only()
        .column(push_message::Column::PushToken)
        .column(push_message::Column::Status)
        .filter(push_message::Column::SendId.eq(send_id))
        .filter(push_message::Column::PushToken.is_in(tokens.iter().copied()));
    if conn.get_database_backend() == DbBackend::Postgres {
        query = query.lock_exclusive();
    }
    query.into_tuple().all(conn).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_between_statuses_net_out_and_a_move_to_the_same_status_is_none() {
        let mut d = Delta::default();
        d.moved(MessageStatus::Batched, MessageStatus::Sent, 3)
            .moved(MessageStatus::Batched, MessageStatus::Sent, 2)
            .moved(MessageStatus::Cancelled, MessageStatus::Sent, 1)
            .moved(MessageStatus::Sent, MessageStatus::Sent, 4);
        assert_eq!(d.changes, [0, -5, 6, 0, -1, 0, 0, 0]);
    }
}
