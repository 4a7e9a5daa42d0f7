"""The catalog's schema revisions, applied in order by Alembic (written by hand, one file each)."""
