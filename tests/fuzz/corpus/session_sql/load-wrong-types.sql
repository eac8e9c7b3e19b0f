UPDATE intervals SET start_ns = 'yesterday' WHERE idx = 0 AND run = 1;
UPDATE intervals SET idle_ns = 1.5, ops = 'many' WHERE idx = 1;
UPDATE lock_intervals SET owner = x'00ff00', hist = '3:1 3:1' WHERE idx = 0;
UPDATE lock_intervals SET hist = '99:1' WHERE idx = 1;
UPDATE locks SET name = x'c3', kind = 42, flags = -1 WHERE id = 1;
UPDATE stacks SET frames = x'00' || frames;
UPDATE tasks SET comm = x'ff', pid = 'one';
UPDATE meta SET value = x'deadbeef' WHERE key = 'online_cpus';
INSERT OR REPLACE INTO meta VALUES ('interval_ms', '-1'), ('workload.threads', '99999999999999999999999');
