UPDATE intervals SET end_ns = start_ns - 1 WHERE idx = 1;
UPDATE intervals SET start_ns = -1000 WHERE idx = 2 AND run = 2;
UPDATE runs SET end_ns = -5, start_ns = -9223372036854775808 WHERE id = 2;
UPDATE lock_intervals SET wait_ns = -1 WHERE idx = 0;
UPDATE lock_intervals SET spin_ns = wait_ns + 1000 WHERE idx = 1;
UPDATE tasks SET sleep_ns = -7;
