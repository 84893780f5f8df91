import sys

from placement.tests.faults import run

sys.exit(run.main())
