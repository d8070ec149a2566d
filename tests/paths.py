"""Where the tests find the checkout and their recorded inputs (one fixtures folder, tests/fixtures/)."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
EXPORTER_FIXTURES = FIXTURES / "exporter"  # recorded /proc, cgroup, sysfs and admin-socket answers of hosts
