"""Everything is declared in setup.cfg; this file only keeps the test
suite's own modules out of the wheel.

``placement.tests`` is installed for other projects' functional tests
(``placement.tests.functional.fixtures``, ``placement.direct``) and must
import in their environments. The suite's test modules and the helpers
only they use need pytest, gabbi and the checkout's ``gabbits/`` and
``benchmarks/``: they run from a checkout, never from the installed
package.
"""

import fnmatch

import setuptools
from setuptools.command import build_py

#: Modules of placement.tests that run only from a checkout.
SUITE_ONLY = ('test_*', 'conftest', 'gabbi_fixtures')


class BuildPy(build_py.build_py):
    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        if not package.startswith('placement.tests'):
            return modules
        return [(pkg, name, path) for pkg, name, path in modules
                if not any(fnmatch.fnmatch(name, pattern)
                           for pattern in SUITE_ONLY)]


setuptools.setup(cmdclass={'build_py': BuildPy})
