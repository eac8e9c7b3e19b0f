WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000)
INSERT INTO lock_intervals(run, idx, lock_id, contentions, wait_ns, hist)
SELECT 1, 100 + i, 1 + i % 3, i, i * 1000, (i % 36) || ':' || i FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 500)
INSERT INTO locks(id, name, kind, mode, caller, address, flags)
SELECT 100 + i, 'lock' || i, 'mutex', '', 'f', i, 32 FROM c;
