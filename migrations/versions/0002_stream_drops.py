"""Streams can be dropped: a stream row is one declaration of its name.

``dropped_lsn`` marks a dropped stream (as a query's), and the primary key
becomes (name, declared_lsn), so that a name declared again before the
checkpoint that purges the dropped row has a row of its own. Batch mode
rebuilds the table on SQLite (which cannot change a primary key in place)
and alters it on PostgreSQL.

Revision ID: 0002
Revises: 0001
Create Date: 2026-02-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("streams") as batch:
        batch.add_column(sa.Column("dropped_lsn", sa.BigInteger(), nullable=True))
        batch.drop_constraint(op.f("pk_streams"), type_="primary")
        batch.create_primary_key(op.f("pk_streams"), ["name", "declared_lsn"])


def downgrade() -> None:
    # the dropped rows go first: the names alone must be unique again
    op.execute(sa.text("DELETE FROM streams WHERE dropped_lsn IS NOT NULL"))
    with op.batch_alter_table("streams") as batch:
        batch.drop_constraint(op.f("pk_streams"), type_="primary")
        batch.create_primary_key(op.f("pk_streams"), ["name"])
        batch.drop_column("dropped_lsn")
