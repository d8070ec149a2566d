"""Whose load: the module's own OSD perf queries attribute the OSDs' client I/O to pools and clients."""
