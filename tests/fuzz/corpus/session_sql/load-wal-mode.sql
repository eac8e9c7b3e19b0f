PRAGMA journal_mode = WAL;
UPDATE intervals SET events = events + 1;
