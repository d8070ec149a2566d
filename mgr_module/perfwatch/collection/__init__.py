"""The background collection: every up OSD's counters read a bounded number at a time (osd_reads.py),
rendered into the cache a scrape reads (collector.py), within a CPU budget (budget.py); the families the
module exports are declared in module_families.py."""
