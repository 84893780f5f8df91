"""Run every gabbi YAML file in ``gabbits/`` against the in-process app.

Each file is one pytest item (files run in parallel under xdist); the
requests inside a file run in order against that file's fresh database,
and a failure reports every failing request of the file.
"""

import glob
import io
import os
import unittest

from gabbi import handlers
from gabbi import suitemaker
from gabbi import utils
import pytest

from placement.tests.functional import gabbi_fixtures

GABBITS = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                       'gabbits')
FILES = sorted(glob.glob(os.path.join(GABBITS, '*.yaml')))


@pytest.mark.parametrize('path', FILES,
                         ids=[os.path.basename(f)[:-5] for f in FILES])
def test_gabbi_file(path):
    suite_dict = utils.load_yaml(yaml_file=path)
    name = os.path.basename(path)[:-5].replace('-', '_')
    suite = suitemaker.test_suite_from_dict(
        unittest.TestLoader(), name, suite_dict, GABBITS, 'placement.test',
        None, gabbi_fixtures, gabbi_fixtures.setup_app,
        handlers=[handler() for handler in handlers.RESPONSE_HANDLERS],
        test_loader_name=__name__)
    output = io.StringIO()
    result = unittest.TextTestRunner(stream=output, verbosity=2).run(suite)
    if not result.wasSuccessful():
        pytest.fail(output.getvalue(), pytrace=False)
