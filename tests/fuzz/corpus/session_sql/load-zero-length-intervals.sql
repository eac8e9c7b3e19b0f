UPDATE intervals SET end_ns = start_ns, cpu_ns = 0, idle_ns = 0;
UPDATE runs SET ops = 0;
