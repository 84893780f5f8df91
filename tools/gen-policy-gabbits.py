"""Write gabbits/policy-{new,legacy}-defaults.yaml from the policy walk.

Run through ``make policy-gabbits`` after routes are added to
placement/web/dispatch.py; the table and the rules that shape the files are
in placement/tests/functional/policy_walk.py.
"""

import os

from placement.tests.functional import policy_walk

GABBITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                       'gabbits')


def main():
    for mode in policy_walk.MODES:
        path = os.path.join(GABBITS, policy_walk.file_name(mode))
        with open(path, 'w', encoding='utf-8') as out:
            out.write(policy_walk.render(mode))
        print('wrote %s' % os.path.relpath(path))


if __name__ == '__main__':
    main()
