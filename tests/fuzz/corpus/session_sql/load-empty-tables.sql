DELETE FROM lock_intervals; DELETE FROM intervals; DELETE FROM stacks; DELETE FROM tasks;
DELETE FROM locks; DELETE FROM runs; DELETE FROM meta;
