"""python3 -m perfwatch_host_exporter [options]"""

import sys

from .cli import main

sys.exit(main())
