"""tox.ini offers the environments OpenStack developers type, installs
each with the constraints file, and runs a Makefile target: the command
is defined once, in the Makefile."""

import configparser
import os
import re

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..')
ENVIRONMENTS = ('py3', 'functional-postgresql', 'functional-mysql', 'cover',
                'pep8', 'docs', 'api-ref', 'releasenotes', 'genconfig',
                'genpolicy')


def _tox():
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(os.path.join(ROOT, 'tox.ini'))
    return tox


def _make_targets():
    with open(os.path.join(ROOT, 'Makefile'), encoding='utf-8') as f:
        return set(re.findall(r'^([a-z][\w-]*):', f.read(), re.M))


def test_every_environment_runs_a_make_target():
    tox = _tox()
    targets = _make_targets()
    for name in ENVIRONMENTS:
        section = tox['testenv:' + name]
        commands = section.get('commands', tox['testenv']['commands'])
        lines = [line.strip() for line in commands.strip().splitlines()]
        assert len(lines) == 1, (name, lines)
        words = lines[0].split()
        assert words[:3] == ['make', 'VENV={envdir}', 'INSTALL=no'], name
        assert words[3] in targets, (name, words[3])


def test_installs_use_the_constraints_file():
    install = _tox()['testenv']['install_command']
    assert ('-c{env:TOX_CONSTRAINTS_FILE:{toxinidir}/constraints/'
            'upper-constraints-2026.1.txt}') in install
    assert os.path.exists(os.path.join(
        ROOT, 'constraints', 'upper-constraints-2026.1.txt'))
