DELETE FROM runs WHERE id = 1;
DELETE FROM locks WHERE id = 2;
UPDATE lock_intervals SET lock_id = 424242 WHERE idx = 2;
UPDATE stacks SET run = 99;
