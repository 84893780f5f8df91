"""Match a path against route templates such as
``/resource_providers/{uuid}/traits``.

The matching rules are the ``routes`` library's: each template is
connected to a ``routes.Mapper`` and the regular expression the mapper
makes for it is taken as it is. A path parameter matches one non-empty
segment, any characters but ``/``; everything else matches literally and
the whole path must match (but for one final newline). The mapper itself
would try its routes one by one; joined into one compiled expression
they match in a single pass whatever the number of routes, which the
dispatcher (every request) and the request metrics (their labels) share,
so both always agree.
"""

import re

import routes

_GROUP = re.compile(r'\(\?P<(\w+)>')


def _route_expressions(templates):
    """The anchored expression the ``routes`` mapper makes for each
    template, in order."""
    mapper = routes.Mapper()
    mapper.minimization = False
    for template in templates:
        mapper.connect(template, template)
    mapper.create_regs()
    return [route.regexp for route in mapper.matchlist]


class Router:
    """``match(path)`` gives ``(template, {parameter: value})`` or None."""

    def __init__(self, templates):
        self.templates = list(templates)
        self._parameters = []
        branches = []
        for index, expression in enumerate(
                _route_expressions(self.templates)):
            if not (expression.startswith('^') and expression.endswith('$')):
                raise ValueError('unanchored route expression %r'
                                 % expression)
            names = []

            def _renamed(found, index=index, names=names):
                # Group names must be unique across the joined routes.
                group = 'p%d_%d' % (index, len(names))
                names.append((group, found.group(1)))
                return '(?P<%s>' % group
            body = _GROUP.sub(_renamed, expression[1:-1])
            self._parameters.append(names)
            branches.append('(?P<r%d>%s)' % (index, body))
        self._pattern = re.compile('^(?:%s)$' % '|'.join(branches))

    def match(self, path):
        found = self._pattern.match(path)
        if found is None:
            return None
        # The route's own group closes last, after its parameters'.
        index = int(found.lastgroup[1:])
        return self.templates[index], {
            name: found.group(group)
            for group, name in self._parameters[index]}
