import sys

from .cli import main
from .shared.closedpipe import guarded

sys.exit(guarded(main))
