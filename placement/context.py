"""Request context: who is calling, and the handles objects need."""

from oslo_context import context as oslo_context


class RequestContext(oslo_context.RequestContext):
    """oslo.context's RequestContext plus database and policy handles.

    ``conn``/``conn_writes`` hold the open transaction while a function
    decorated with ``placement.db.api.reader``/``writer`` runs.
    """

    def __init__(self, *args, db=None, config=None, policy=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.db = db
        self.config = config
        self.policy = policy
        self.conn = None
        self.conn_writes = False

    def can(self, rule, target=None):
        """Raise 403 unless policy ``rule`` allows this caller."""
        if target is None:
            target = {'project_id': self.project_id,
                      'user_id': self.user_id}
        self.policy.authorize(self, rule, target)


class AdminContext:
    """Context for work outside requests: start-up, CLI tools, tests.

    ``conn``/``conn_writes`` as in RequestContext.
    """

    def __init__(self, db, config=None):
        self.db = db
        self.config = config
        self.conn = None
        self.conn_writes = False
