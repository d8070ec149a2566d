# ceph-perfwatch: `make demo` starts a lab cluster with the module; `make test` runs every test.
# Both install what is missing: Debian packages with apt-get, Python tools into .venv.
# `make check` is the inner loop: linters and pure unit tests, no apt, no root (see `check` below).

SHELL := /bin/bash
.DEFAULT_GOAL := help

# Debian's python3 (not a pyenv one): python3-rados and python3-rbd are installed for it.
SYSTEM_PYTHON := /usr/bin/python3
VENV := .venv
PY := $(VENV)/bin/python
APT_PACKAGES := ceph-mon ceph-osd ceph-mgr ceph-common radosgw python3-rados python3-rbd \
                python3-venv iproute2 mount prometheus prometheus-node-exporter prometheus-alertmanager jsonnet \
                mmdebstrap buildah dpkg-dev debhelper lintian python3-bcrypt openssl
TEST_LAB_DIR ?= $(CURDIR)/.lab-test
PYTEST_ARGS ?=
# The cluster tests run in full on RELEASE and, on each other release of RELEASES, the tests marked
# every_release (what differs between releases). Releases other than Pacific run from a Debian rootfs
# the lab builds on first use (about a minute each, cached in /var/cache/perfwatch-lab/rootfs).
RELEASE ?= pacific
RELEASES ?= $(shell $(PY) -c 'from lab.releases import names; print(*names())')
# Release names as dev/lab/releases.py resolves them (RELEASE=18.2 or Reef is reef), so none runs twice.
release_name = $(shell $(PY) -c 'import sys; from lab.releases import resolve; print(resolve(sys.argv[1]).name)' '$(1)' 2>/dev/null)
RELEASE_NAME = $(call release_name,$(RELEASE))
OTHER_RELEASES = $(filter-out $(RELEASE_NAME),$(foreach r,$(RELEASES),$(call release_name,$(r))))

# `make image`: the container images (Containerfile) on CEPH_IMAGE (default: the Containerfile's), tagged
# under REGISTRY. Needs the registry of CEPH_IMAGE to be reachable.
CEPH_IMAGE ?=
REGISTRY ?= localhost

.PHONY: help deps apt-deps venv prometheus3 lint unit check cluster test demo down clean image deb

help:
	@echo "make demo   start a lab Ceph cluster with perfwatch enabled (.venv/bin/python -m lab ...; RELEASE=reef|tentacle)"
	@echo "make check  linters and pure unit tests in a plain virtual environment: no apt, no root, no Ceph"
	@echo "make test   lint, unit tests, then cluster tests against a lab started for the run"
	@echo "make down   stop the demo lab"
	@echo "make deb    the Debian packages ceph-mgr-perfwatch and perfwatch-host-exporter, in build/deb/"
	@echo "make image  the container images (CEPH_IMAGE=quay.io/ceph/ceph:vX.Y.Z REGISTRY=registry.example.com/ceph)"

apt-deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# --system-site-packages: the lab and the cluster tests use Debian's python3-rados and python3-rbd.
# `pip install -e .` makes perfwatch, the exporter, alerts, dashboards and dev/'s lab, bench and tooling
# importable by name (pyproject.toml), with no edit of the import path.
$(VENV)/.installed: requirements-dev.txt pyproject.toml | apt-deps
	$(SYSTEM_PYTHON) -m venv --system-site-packages $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt -e .
	touch $@

venv: $(VENV)/.installed

# Prometheus 3 (the 3.x LTS) beside Debian 12's 2.42, for the promtool tests: Debian testing's packages,
# unpacked into /var/cache/perfwatch-lab/prometheus3, not installed (dev/tooling/prometheus3.py)
prometheus3: venv
	$(PY) -m tooling.prometheus3 >/dev/null

deps: apt-deps venv prometheus3

# The linters, with the tools of the virtual environment $(1)
define linters
	$(1)/bin/ruff check .
	$(1)/bin/ruff format --check .
	$(1)/bin/vermin -t=3.6- --violations --no-tips --eval-annotations mgr_module/perfwatch
	@# --no-namespace-packages: without Ceph, `import mgr_module` must not find this checkout's mgr_module/ folder
	MYPYPATH=/usr/share/ceph/mgr $(1)/bin/mypy --ignore-missing-imports --follow-imports=silent --no-namespace-packages mgr_module/perfwatch
	$(1)/bin/vermin -t=3.6- --violations --no-tips --eval-annotations exporters/perfwatch_host_exporter
	MYPYPATH=mgr_module $(1)/bin/mypy --ignore-missing-imports --follow-imports=silent exporters
	MYPYPATH=dev $(1)/bin/mypy --ignore-missing-imports dev/lab dev/bench dev/tooling alerts dashboards
	$(1)/bin/mypy --ignore-missing-imports packaging/build_image.py packaging/build-debs
endef

lint: deps
	$(call linters,$(VENV))

# The unit tests run on every core (pytest-xdist), a file's tests together on one worker: 117 s -> 55-60 s here.
# UNIT_JOBS=0 runs them in one process, as before.
UNIT_JOBS ?= auto
unit: deps
	$(PY) -m pytest tests/unit -n $(UNIT_JOBS) --dist loadfile $(PYTEST_ARGS)

# `make check`: the linters and the unit tests that need nothing of the host, from a plain virtual
# environment (no --system-site-packages), as any user, on any Linux with Python 3.11 or later: no apt, no
# root, no Ceph. It leaves out the unit tests marked host_tools (promtool, amtool, jsonnet, Ceph's
# mgr_module.py, dpkg and lintian, buildah: what `make deps` installs) and root (chown, unshare, sockets
# of root's daemons); `make test` runs everything, as root.
CHECK_VENV ?= .venv-check
CHECK_PYTHON ?= python3
$(CHECK_VENV)/.installed: requirements-dev.txt pyproject.toml
	$(CHECK_PYTHON) -m venv $(CHECK_VENV)
	$(CHECK_VENV)/bin/python -m pip install -q --upgrade pip
	$(CHECK_VENV)/bin/python -m pip install -q -r requirements-dev.txt -e .
	touch $@

check: $(CHECK_VENV)/.installed
	$(call linters,$(CHECK_VENV))
	$(CHECK_VENV)/bin/python -m pytest tests/unit -n $(UNIT_JOBS) --dist loadfile -m 'not host_tools and not root' $(PYTEST_ARGS)

# The cluster tests start their own lab in $(TEST_LAB_DIR) (-<release> for the other releases); the
# `down` after each run is a safety net for a run that was killed before pytest's teardown.
# A release's rootfs is built (or found in the cache) before its tests, so no lab start waits for a build.
cluster: deps
	@if [ -z "$(RELEASE_NAME)" ]; then echo "RELEASE=$(RELEASE): not a release the lab runs ($(RELEASES))"; exit 2; fi
	@status=0; \
	for release in $(RELEASE_NAME) $(OTHER_RELEASES); do \
	  if [ $$release = $(RELEASE_NAME) ]; then dir=$(TEST_LAB_DIR); marks=""; what=all; \
	  else dir=$(TEST_LAB_DIR)-$$release; marks="-m every_release"; what="those marked every_release"; fi; \
	  echo "== cluster tests on $$release: $$what"; \
	  $(PY) -m lab rootfs --release $$release || { status=1; continue; }; \
	  PERFWATCH_TEST_RELEASE=$$release PERFWATCH_TEST_LAB_DIR=$$dir \
	    $(PY) -m pytest tests/cluster $$marks --durations=25 $(PYTEST_ARGS) || status=1; \
	  $(PY) -m lab --dir $$dir down >/dev/null 2>&1; \
	done; \
	exit $$status

test: lint unit cluster

# `make deb`: ceph-mgr-perfwatch and perfwatch-host-exporter (.deb) in build/deb/, lintian-checked.
deb: apt-deps
	packaging/build-debs

image: apt-deps
	$(SYSTEM_PYTHON) packaging/build_image.py $(if $(CEPH_IMAGE),--base '$(CEPH_IMAGE)') --registry '$(REGISTRY)'

demo: deps
	$(PY) -m lab up --release '$(RELEASE)'
	@eval "$$($(PY) -m lab env)"; \
	echo; echo "== ceph -s"; ceph -s; \
	echo "== ceph perfwatch status"; ceph perfwatch status; \
	echo; echo "== ceph perfwatch metrics"; ceph perfwatch metrics; \
	echo; echo "Next:"; \
	echo "  $$($(PY) -m lab env)"; \
	echo "  ceph perfwatch status --format json"; \
	echo "  curl -s http://127.0.0.1:9284/metrics   # the active mgr (mgr.y, the standby, is on 9286)"; \
	echo "  ceph perfwatch bench run --kind osd     # then: ceph perfwatch bench status / history"; \
	echo "  ceph perfwatch bench schedule           # the light probes (rados, rgw, net) already run"; \
	echo "  ceph config get mgr mgr/perfwatch/collect_interval   # the lab sets 10 s (default 30)"; \
	echo "  . .venv/bin/activate                   # then python3 -m lab ... (the checkout, installed)"; \
	echo "  python3 -m lab status                   # daemons, PIDs, devices"; \
	echo "  python3 -m lab stop --kill mgr.x        # watch mgr.y take over; then: python3 -m lab start mgr.x"; \
	echo "  make down; python3 -m lab up --hosts 3  # one network namespace per OSD host"; \
	echo "  python3 -m lab saturate cpu --osd 0 --cores 0.2; python3 -m lab load --pattern small-random-write --seconds 120"; \
	echo "                                          # PerfwatchOSDCPUSaturated fires in Prometheus (/alerts) and Alertmanager"; \
	echo "  make down                               # stop everything the lab started"; \
	echo; echo "== monitoring: Prometheus scrapes perfwatch, the host exporters, node_exporter and Ceph's module"; \
	$(PY) -m lab status | grep -E '^(monitor|metrics|ceph) '

down:
	@if [ -x $(PY) ]; then $(PY) -m lab down; else PYTHONPATH=dev python3 -m lab down; fi

clean: down
	rm -rf $(VENV) $(CHECK_VENV) .pytest_cache .ruff_cache
