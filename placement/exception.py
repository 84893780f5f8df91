"""Domain exceptions raised by the objects layer.

Objects know nothing of HTTP; handlers catch these and raise the matching
``placement.web.errors`` class. ``str(exc)`` is the text clients see inside
the error detail, so message formats are those of upstream Placement, which
clients match.
"""


class PlacementException(Exception):
    msg_fmt = 'An unknown exception occurred.'

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            message = self.msg_fmt % kwargs
        super().__init__(message)


class DatabaseUnavailable(PlacementException):
    """The database cannot be reached or used now; worth retrying later.

    Raised by the transaction decorators of ``placement.db.api``.
    """
    msg_fmt = 'Database unavailable (%(reason)s)'


class NotFound(PlacementException):
    msg_fmt = 'Resource could not be found.'


class ResourceProviderNotFound(NotFound):
    msg_fmt = 'No resource provider with uuid %(uuid)s found'


class ResourceClassNotFound(NotFound):
    msg_fmt = 'No such resource class %(name)s.'


class TraitNotFound(NotFound):
    msg_fmt = 'No such trait(s): %(names)s.'


class TraitCannotDeleteStandard(PlacementException):
    msg_fmt = 'Cannot delete standard trait %(name)s.'


class TraitInUse(PlacementException):
    msg_fmt = 'The trait %(name)s is in use by a resource provider.'


class InventoryNotFound(NotFound):
    msg_fmt = 'No inventory of class %(resource_class)s found.'


class Conflict(PlacementException):
    msg_fmt = 'Conflict.'


class ConcurrentUpdateDetected(Conflict):
    msg_fmt = ('Another thread concurrently updated the resource provider '
               'data. Please retry your update')


class TransactionConflict(ConcurrentUpdateDetected):
    """A writer kept losing conflicts with other transactions (deadlocks,
    Galera certification failures) after all its re-runs; nothing was
    written. Raised by the transaction decorators of ``placement.db.api``.
    ``reason`` names the last database error, for the log only."""

    def __init__(self, reason=''):
        super().__init__()
        self.reason = reason


class ResourceProviderConcurrentUpdateDetected(ConcurrentUpdateDetected):
    """A provider generation compare-and-set failed."""


class ResourceProviderGenerationMismatch(Conflict):
    """The client's provider generation is not the stored one."""
    msg_fmt = ("Resource provider's generation already changed. Please "
               "update the generation and try again.")


class AggregateCreateConflict(Conflict):
    """Aggregate rows or associations kept clashing with another writer."""
    msg_fmt = 'Update conflict: %(detail)s'


class ConsumerGenerationConflict(Conflict):
    msg_fmt = ('Another thread concurrently updated the data. '
               'Please retry your update')


class DuplicateResourceProvider(Conflict):
    msg_fmt = 'Conflicting resource provider %(duplicate)s already exists.'


class CannotDeleteParentResourceProvider(Conflict):
    msg_fmt = ('Unable to delete parent resource provider %(uuid)s: It has '
               'child resource providers.')


class ResourceProviderInUse(Conflict):
    msg_fmt = 'Resource provider has allocations.'


class ObjectActionError(PlacementException):
    msg_fmt = 'Object action %(action)s failed because: %(reason)s'


# -- inventories --------------------------------------------------------

class InvalidInventoryRecord(PlacementException):
    """A record no inventory write accepts; ``problem`` is the sentence
    of ``capacity.problem`` naming the wrong value (for a reserved value
    too large, upstream Placement's own words)."""
    msg_fmt = ("Invalid inventory for '%(resource_class)s' on resource "
               "provider '%(provider)s'. %(problem)s")


class InventoryExists(Conflict):
    msg_fmt = ("Inventory of class %(resource_class)s already exists on "
               "resource provider %(provider)s.")


class InventoryInUse(Conflict):
    msg_fmt = ("Inventory for '%(resource_classes)s' on resource provider "
               "'%(provider)s' in use.")


# -- resource classes ---------------------------------------------------

class ResourceClassExists(Conflict):
    msg_fmt = 'Resource class already exists: %(name)s'


class ResourceClassCannotDeleteStandard(PlacementException):
    msg_fmt = 'Cannot delete standard resource class %(name)s.'


class ResourceClassCannotUpdateStandard(PlacementException):
    msg_fmt = 'Cannot update standard resource class %(name)s'


class ResourceClassInUse(Conflict):
    msg_fmt = ('Cannot delete resource class %(name)s. Class is in use in '
               'inventory.')


class MaxDBRetriesExceeded(Conflict):
    msg_fmt = ('Max retries of DB transaction exceeded attempting to '
               'create resource class: %(name)s, please try again.')


# -- consumers and allocations -------------------------------------------

class ConsumerGenerationMismatch(Conflict):
    """The client's consumer generation is not the stored one (or the
    consumer exists/does not exist contrary to what it believed)."""
    msg_fmt = ('consumer generation conflict - expected %(expected)s but '
               'got %(given)s')


class ConsumerAllocationsNotFound(NotFound):
    msg_fmt = "No allocations for consumer '%(consumer)s'"


class InvalidAllocation(PlacementException):
    """An allocation does not fit the provider's inventory."""


class InvalidInventory(InvalidAllocation):
    msg_fmt = ("Inventory for '%(resource_class)s' on resource provider "
               "'%(provider)s' invalid.")


class InvalidAllocationCapacityExceeded(InvalidAllocation):
    msg_fmt = ("Unable to create allocation for '%(resource_class)s' on "
               "resource provider '%(provider)s'. The requested amount would "
               "exceed the capacity.")


class InvalidAllocationConstraintsViolated(InvalidAllocation):
    msg_fmt = ("Unable to create allocation for '%(resource_class)s' on "
               "resource provider '%(provider)s'. The requested amount would "
               "violate inventory constraints.")


class NoClaimCandidates(PlacementException):
    """A claim's candidates query found no candidate."""
    msg_fmt = 'No allocation candidate fits the claim.'


class ClaimCandidatesTaken(PlacementException):
    """Every candidate a claim wrote was refused."""
    msg_fmt = ('Concurrent writes took the capacity of the %(tried)d '
               'candidates tried.')


class CandidateSearchTooLarge(PlacementException):
    """The candidates search of one request would take more steps than
    ``[placement] max_candidate_search_steps`` allows."""
    msg_fmt = ('The allocation candidates search gave up after %(limit)d '
               'steps ([placement] max_candidate_search_steps): its '
               'request groups match too many providers, or cannot be '
               'combined, within that bound. Send fewer groups, or a '
               'limit.')
