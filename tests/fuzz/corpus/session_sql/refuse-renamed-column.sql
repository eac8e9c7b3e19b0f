ALTER TABLE intervals RENAME COLUMN idle_ns TO idle;
