import os
import sys

from .cli import main

try:
    code = main()
    sys.stdout.flush()  # a reader gone (`status | head`) raises here, not at the interpreter's exit
except BrokenPipeError:
    # Whoever read the output stopped reading: nothing is wrong with the lab, and nothing more can be said.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 1
sys.exit(code)
