"""Rules of the code base that api-ref/design.rst and HACKING.rst state:
the layers import only downwards, and the repository explains itself
without citing a document outside it."""

import ast
import os
import re

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..',
                                     '..'))

#: Layer -> modules it must never import (prefix match on dotted names).
FORBIDDEN_IMPORTS = {
    # Handlers never touch SQL.
    'placement/handlers': ('sqlalchemy', 'placement.db'),
    'placement/schemas': ('sqlalchemy', 'placement.db'),
    # Objects never see HTTP.
    'placement/objects': ('webob', 'routes', 'placement.web',
                          'placement.microversion', 'placement.middleware',
                          'placement.openapi', 'placement.deploy'),
    'placement/db': ('webob', 'routes', 'placement.web',
                     'placement.microversion', 'placement.middleware',
                     'placement.openapi', 'placement.objects'),
}

#: Citations of an outside document's numbering: a numbered spec, a
#: section sign, a numbered quirk. (Spelled so that this file does not
#: match it.)
CITATION = re.compile(r'[Ss]pec \d+|\u00a7|quir[k] Q\d+|\(Q\d+\)')
#: What must not cite it: everything of ours but the test data directory
#: trees it does not concern.
CHECKED = ('placement', 'gabbits', 'tools', 'benchmarks', 'api-ref',
           'doc', 'releasenotes', 'README.rst', 'HACKING.rst')
TEXT_SUFFIXES = ('.py', '.yaml', '.rst', '.sh', '.cfg', '.txt', '.mako')


def _python_files(directory):
    for dirpath, _dirs, files in os.walk(os.path.join(ROOT, directory)):
        for name in files:
            if name.endswith('.py'):
                yield os.path.join(dirpath, name)


def imported_modules(path):
    """Dotted names a Python file imports (``from a import b`` gives
    ``a`` and ``a.b``, as b may be a module)."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module
            for alias in node.names:
                yield '%s.%s' % (node.module, alias.name)


def _breaks(name, forbidden):
    return any(name == f or name.startswith(f + '.') for f in forbidden)


@pytest.mark.parametrize('layer', sorted(FORBIDDEN_IMPORTS))
def test_layer_imports_only_downwards(layer):
    forbidden = FORBIDDEN_IMPORTS[layer]
    found = ['%s imports %s' % (os.path.relpath(path, ROOT), name)
             for path in _python_files(layer)
             for name in imported_modules(path) if _breaks(name, forbidden)]
    assert not found, found


def test_forbidden_import_is_detected(tmp_path):
    path = tmp_path / 'widget.py'
    path.write_text('from placement import errors\nimport sqlalchemy as sa\n')
    names = list(imported_modules(str(path)))
    assert _breaks('placement.web.errors',
                   FORBIDDEN_IMPORTS['placement/objects'])
    assert any(_breaks(n, FORBIDDEN_IMPORTS['placement/handlers'])
               for n in names)


def _text_files():
    for entry in CHECKED:
        top = os.path.join(ROOT, entry)
        if os.path.isfile(top):
            yield top
            continue
        for dirpath, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != '__pycache__']
            for name in files:
                if name.endswith(TEXT_SUFFIXES):
                    yield os.path.join(dirpath, name)


def test_no_citation_of_documents_outside_the_repository():
    """A fact worth citing goes into api-ref/ in our own words; comments
    point there (see HACKING.rst)."""
    found = []
    for path in _text_files():
        with open(path, encoding='utf-8') as f:
            for number, line in enumerate(f, 1):
                if CITATION.search(line):
                    found.append('%s:%d: %s' % (os.path.relpath(path, ROOT),
                                                number, line.strip()))
    assert not found, '\n'.join(found)


@pytest.mark.parametrize('line', [
    '# (spe' 'c 10 \u00a73.3)', '"""Policy (Spe' 'c 13)."""',
    'keeps it (quir' 'k Q3).', '- name: stripped (Q' '21)'])
def test_citation_pattern_matches(line):
    assert CITATION.search(line)


#: "behaviour-choices.rst, 'Entry name'" in a comment, once comment
#: markers and line breaks are folded away.
_ENTRY_REFERENCE = re.compile(r"behaviour-choices\.rst(?:``)?,? '([^']+)'")


def _folded(text):
    lines = [re.sub(r'^\s*(#:?|-)?\s*', '', line)
             for line in text.splitlines()]
    return ' '.join(lines)


def test_references_name_existing_behaviour_choices():
    with open(os.path.join(ROOT, 'api-ref', 'behaviour-choices.rst'),
              encoding='utf-8') as f:
        names = {line.strip() for line in f
                 if line.strip() and not line[0].isspace()}
    dangling = []
    for path in _text_files():
        if os.path.samefile(path, __file__):
            continue  # its examples are not references
        with open(path, encoding='utf-8') as f:
            for name in _ENTRY_REFERENCE.findall(_folded(f.read())):
                if name not in names:
                    dangling.append('%s: %r' % (os.path.relpath(path, ROOT),
                                                name))
    assert not dangling, dangling


def test_folded_reference_is_found():
    text = ("    # see api-ref/behaviour-choices.rst, 'Orphan\n"
            "    # consumers').\n")
    assert _ENTRY_REFERENCE.findall(_folded(text)) == ['Orphan consumers']


def _module_name(path, root):
    relative = os.path.relpath(path, root)[:-len('.py')].split(os.sep)
    if relative[-1] == '__init__':
        relative = relative[:-1]
    return '.'.join(relative)


def import_graph(root, package='placement', skip=('placement.tests',)):
    """{module: modules of ``package`` it imports}, for every module under
    ``root/package`` but ``skip``; imports anywhere in a file count,
    those inside functions too. ``from a import b`` names module ``a.b``
    when b is one, else ``a``."""
    modules = {}
    for path in _python_files(os.path.join(root, package)):
        name = _module_name(path, root)
        if not any(name == s or name.startswith(s + '.') for s in skip):
            modules[name] = path
    graph = {}
    for name, path in modules.items():
        targets = set()
        for imported in imported_modules(path):
            if imported in modules:
                targets.add(imported)
        # "from a import b" yields both a and a.b: a.b alone when it is
        # a module, so that importing a package's module is no edge to
        # the package's (usually empty) __init__.
        graph[name] = {t for t in targets
                       if not any(o.startswith(t + '.') for o in targets)
                       and t != name}
    return graph


def cycles(graph):
    """The strongly connected components of more than one module
    (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


#: What each package (or top-level module) of placement may import,
#: besides itself and the core every layer may use. api-ref/design.rst,
#: 'Layers and what they may import', draws the same picture.
CORE = ('context', 'exception', 'microversion')
MAY_IMPORT = {
    'wsgi': ('conf', 'deploy', 'observability'),
    'cmd': ('conf', 'db', 'deploy', 'objects', 'observability'),
    'direct': ('deploy',),
    'deploy': ('conf', 'db', 'middleware', 'objects', 'observability',
               'policy', 'web'),
    'middleware': ('conf', 'observability', 'openapi', 'policies',
                   'policy', 'schemas', 'web'),
    'web': ('handlers', 'middleware'),
    'handlers': ('middleware', 'objects', 'observability', 'openapi',
                 'schemas', 'web'),
    'openapi': ('middleware', 'schemas'),
    'schemas': ('objects',),
    'objects': ('db', 'observability'),
    'db': ('observability',),
    'observability': (),
    'policy': ('conf', 'policies', 'web'),
    'conf': (),
    'policies': (),
    'context': (),
    'exception': (),
    'microversion': (),
}


def _package(module):
    return module.split('.')[1]


def package_violations(graph):
    found = []
    for module, imported in sorted(graph.items()):
        if module == 'placement':
            continue
        package = _package(module)
        if package not in MAY_IMPORT:
            found.append('%s: package %s has no place in MAY_IMPORT'
                         % (module, package))
            continue
        allowed = set(MAY_IMPORT[package]) | set(CORE) | {package}
        found += ['%s imports %s' % (module, target)
                  for target in sorted(imported)
                  if _package(target) not in allowed]
    return found


def test_packages_import_only_what_the_design_allows():
    assert package_violations(import_graph(ROOT)) == []


def test_a_package_import_against_the_design_is_found():
    graph = {'placement.db.api': {'placement.web.validation'},
             'placement.gadgets.x': set(),
             'placement.objects.candidates.engine': {
                 'placement.db.api', 'placement.exception'}}
    assert package_violations(graph) == [
        'placement.db.api imports placement.web.validation',
        'placement.gadgets.x: package gadgets has no place in MAY_IMPORT']


def test_no_import_cycles():
    """Modules import one another without cycles, function-level imports
    included: each module has one place in the layering that
    api-ref/design.rst draws."""
    assert cycles(import_graph(ROOT)) == []


def test_an_import_cycle_is_found(tmp_path):
    package = tmp_path / 'placement'
    (package / 'web').mkdir(parents=True)
    (package / '__init__.py').write_text('')
    (package / 'web' / '__init__.py').write_text('')
    (package / 'web' / 'route_table.py').write_text(
        'from placement.web import dispatch\n')
    (package / 'web' / 'dispatch.py').write_text(
        'def serve():\n    from placement.web import route_table\n')
    (package / 'alone.py').write_text(
        'from placement.web import route_table\n')
    assert cycles(import_graph(str(tmp_path))) == [
        ['placement.web.dispatch', 'placement.web.route_table']]
