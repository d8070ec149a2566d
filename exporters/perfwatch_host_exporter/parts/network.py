"""The host's NICs: each link's capacity (speed, or a tc rate that shapes it: network.py), and which
device carries each address (nic_map.py), so the rules join an OSD's networks to the NIC that carries them."""

from typing import List

from perfwatch.common.metrics_model import Labels, Sample

from .. import families as f
from .. import network, nic_map
from .registry import HOST, PARTS, Part, Run


@PARTS.register("network", HOST)
class Network(Part):
    def host(self, run: Run, host: Labels) -> List[Sample]:
        c = self.c

        def error(message: str) -> None:
            self.error(run, "network", message)

        try:
            links = network.capacities(c.root, c.tc, error, c.net_exclude)
        except OSError as exc:
            error("listing /sys/class/net: {}".format(exc))
            return []
        rows = []
        for link in links:
            labels = (*host, ("device", link.device), ("source", link.source))
            rows.append(Sample(f.LINK_CAPACITY, "", labels, link.bytes_per_second))
        if c.ip is not None:
            for held in nic_map.carried_addresses(c.root, c.ip, error):
                labels = (*host, ("address", held.address), ("device", held.device), ("carrier", held.carrier))
                rows.append(Sample(f.ADDRESS_INFO, "", labels, 1.0))
        return rows
