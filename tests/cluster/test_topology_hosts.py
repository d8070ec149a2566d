"""The session lab runs with --hosts 3: one network namespace per host, joined over veth pairs."""

from __future__ import annotations

import os
import subprocess

from lab import cephcli, net

from .labutil import LabHandle


def test_each_host_has_its_namespace_and_its_osd_runs_inside_it(lab: LabHandle) -> None:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    topo = lab.lab.topo
    assert len(topo.hosts) == 3
    for osd in topo.osds:
        host = osd.host
        assert host.netns and host.netns in listed
        pid = lab.lab.state.daemons[f"osd.{osd.id}"].pid
        assert os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat(f"/run/netns/{host.netns}").st_ino
        meta = lab.ceph("osd", "metadata", str(osd.id))
        assert f"{host.address}:" in meta["front_addr"], meta["front_addr"]
    tree = lab.ceph("osd", "tree")
    hosts = {n["name"]: n["children"] for n in tree["nodes"] if n["type"] == "host"}
    assert sorted(hosts) == sorted(h.crush_name for h in topo.hosts)
    assert all(len(children) == 1 for children in hosts.values())


def test_each_hosts_veth_carries_bytes_during_a_write_load(lab: LabHandle) -> None:
    pool = "pwtest-veth-load"
    links = [h.veth for h in lab.lab.topo.hosts]
    lab.ceph("osd", "pool", "create", pool, "16", as_json=False)
    lab.ceph("osd", "pool", "application", "enable", pool, "lab-test", as_json=False)
    try:
        before = {link: sum(net.interface_bytes(link)) for link in links}
        cephcli.run_tool(
            "rados", lab.conf, "-p", pool, "bench", "5", "write", "-b", "65536", "-t", "8", timeout=120, as_json=False
        )
        grown = {link: sum(net.interface_bytes(link)) - before[link] for link in links}
    finally:
        lab.ceph("osd", "pool", "delete", pool, pool, "--yes-i-really-really-mean-it", as_json=False)
    # 5 s of 64 KiB writes, replicated 3 ways over 3 hosts: every host's link moves megabytes.
    assert all(delta > 1024 * 1024 for delta in grown.values()), grown
