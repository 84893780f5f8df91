import sys

from benchmarks.faults import run

sys.exit(run.main())
