"""The router matches as the ``routes`` library's mapper does, route by
route: same route, same parameters, same misses."""

import itertools

import pytest
import routes

from placement.web import route_table
from placement.web import router

VALUES = ['x', '5ecd1b3a-7f37-4c2e-9bb5-2a3d7f1e9c01', 'a.b', 'a.json',
          'CUSTOM_A.B', 'a,b', 'a;b', 'a#b', 'a b', '%2F', '.', 'x.',
          '\u00e9\u00ff', 'a\nb', 'a\n', '\n', '{uuid}', 'a?b', '']
EXTRA = ['/', '', '//', '/TRAITS', '/traits\n', '/\n', '/nothing',
         '/resource_providers/x/y', '/capacity/x', 'traits',
         '/resource_providers//inventories']


def _mapper():
    mapper = routes.Mapper()
    mapper.minimization = False
    for template in route_table.ROUTES:
        mapper.connect(template, template, _route=template)
    return mapper


def _paths():
    for template in route_table.ROUTES:
        names = template.count('{')
        for values in itertools.product(VALUES, repeat=names):
            path = template
            for value in values:
                path = path[:path.index('{')] + value + path[
                    path.index('}') + 1:]
            yield path
            yield path + '/'
            yield path + '/more'
    yield from EXTRA


def test_it_matches_as_the_routes_mapper_did():
    mapper = _mapper()
    ours = router.Router(route_table.ROUTES)
    checked = 0
    for path in _paths():
        expected = mapper.match(path)
        if expected is not None:
            expected = (expected.pop('_route'), expected)
        assert ours.match(path) == expected, repr(path)
        checked += 1
    assert checked > 1000


def test_parameters_are_named_as_in_the_template():
    ours = router.Router(['/a/{first}/b/{second}', '/a/{first}'])
    assert ours.match('/a/1/b/2') == ('/a/{first}/b/{second}',
                                      {'first': '1', 'second': '2'})
    assert ours.match('/a/1') == ('/a/{first}', {'first': '1'})
    assert ours.match('/a/1/b/') is None


def test_an_expression_routes_did_not_anchor_is_refused(monkeypatch):
    # The joined expression relies on each route's matching the whole
    # path; a mapper that stopped anchoring them must not go unnoticed.
    monkeypatch.setattr(router, '_route_expressions',
                        lambda templates: ['/a/(?P<x>[^/]+?)'])
    with pytest.raises(ValueError, match='unanchored'):
        router.Router(['/a/{x}'])
