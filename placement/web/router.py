"""Match a path against route templates such as
``/resource_providers/{uuid}/traits``.

A path parameter matches one non-empty segment, any characters but
``/``; everything else matches literally and the whole path must match
(but for one final newline, as with the ``routes`` library).
All templates are compiled into one regular expression, so a match costs
a few microseconds whatever the number of routes (the ``routes``
library's mapper took about 20 µs per request). The dispatcher routes
with it and the request metrics label with it, so both always agree.
"""

import re

_PARAMETER = re.compile(r'\{(\w+)\}')


class Router:
    """``match(path)`` gives ``(template, {parameter: value})`` or None."""

    def __init__(self, templates):
        self.templates = list(templates)
        self._parameters = []
        branches = []
        for index, template in enumerate(self.templates):
            parts = _PARAMETER.split(template)
            body = []
            names = []
            for position, part in enumerate(parts):
                if position % 2 == 0:
                    body.append(re.escape(part))
                else:
                    group = 'p%d_%d' % (index, len(names))
                    names.append((group, part))
                    body.append('(?P<%s>[^/]+?)' % group)
            self._parameters.append(names)
            branches.append('(?P<r%d>%s)' % (index, ''.join(body)))
        # ``$`` and lazy parameters, as ``routes`` compiled them: a path
        # ending in one newline matches without it (upstream Placement,
        # which routes with ``routes``, answers such paths too).
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
