INSERT OR REPLACE INTO meta VALUES ('trace', 'on');
DROP TABLE episodes;
