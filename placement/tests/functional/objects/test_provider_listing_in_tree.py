"""``list_providers(in_tree=...)`` alone: one tree, whichever member is
named, with every member's root and parent."""

import uuid

from placement.objects import provider_listing
from placement.objects import resource_provider as rp_obj


def _new(ctx, name, parent=None):
    return rp_obj.create(ctx, str(uuid.uuid4()), name, parent)


def test_any_member_names_its_whole_tree_and_only_it(ctx):
    root = _new(ctx, 'root')
    other = _new(ctx, 'other-root')
    child = _new(ctx, 'child', root.uuid)
    _new(ctx, 'other-child', other.uuid)
    leaf = _new(ctx, 'leaf', child.uuid)
    for member in (root, child, leaf):
        listed = provider_listing.list_providers(ctx, in_tree=member.uuid)
        assert [(p.name, p.root_uuid, p.parent_uuid)
                for p in listed] == [
            ('root', root.uuid, None),
            ('child', root.uuid, root.uuid),
            ('leaf', root.uuid, child.uuid)]
        # The same rows as the general listing statement reads.
        assert listed == [p for p in provider_listing.list_providers(ctx)
                          if p.root_uuid == root.uuid]
        assert provider_listing.list_providers(
            ctx, in_tree=member.uuid, changed=True) == [
            p for p in provider_listing.list_providers(ctx, changed=True)
            if p.root_uuid == root.uuid]
    assert [p.name for p in provider_listing.list_providers(
        ctx, in_tree=other.uuid)] == ['other-root', 'other-child']


def test_an_unknown_member_names_nothing(ctx):
    _new(ctx, 'root')
    assert provider_listing.list_providers(
        ctx, in_tree=str(uuid.uuid4())) == []


def test_other_filters_still_apply(ctx):
    root = _new(ctx, 'root')
    _new(ctx, 'child', root.uuid)
    assert [p.name for p in provider_listing.list_providers(
        ctx, in_tree=root.uuid, name='child')] == ['child']
