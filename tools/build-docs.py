"""Render api-ref/*.rst to HTML in build/api-ref, failing on any warning.

``make docs`` runs it; placement/tests/unit/test_docs.py checks the same
files parse cleanly on every test run.
"""

import glob
import os
import sys

from docutils import core

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
SETTINGS = {'halt_level': 2, 'report_level': 2}


def main():
    out_dir = os.path.join(ROOT, 'build', 'api-ref')
    os.makedirs(out_dir, exist_ok=True)
    for source in sorted(glob.glob(os.path.join(ROOT, 'api-ref', '*.rst'))):
        target = os.path.join(
            out_dir, os.path.basename(source)[:-4] + '.html')
        core.publish_file(source_path=source, destination_path=target,
                          writer_name='html', settings_overrides=SETTINGS)
        print('wrote %s' % os.path.relpath(target, ROOT))
    return 0


if __name__ == '__main__':
    sys.exit(main())
